import PushHTTP

extension ProviderError {
    /// The circuit for `host` is open; try again after `retryAfter`.
    public static func circuitOpen(
        host: String, retryAfter: Duration?, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(
            kind: .circuitOpen, message: "circuit open for \(host): too many server errors or connection failures",
            retryAfter: retryAfter, host: host, file: file, line: line)
    }

    /// The rate limiter holds the request back for `retryAfter`.
    public static func rateLimited(
        host: String, retryAfter: Duration, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(
            kind: .rateLimited, message: "rate limited: next slot for \(host) in \(retryAfter)",
            retryAfter: retryAfter, host: host, file: file, line: line)
    }

    /// APNs refused another provider-token update; back off for `retryAfter`.
    public static func providerTokenThrottled(
        retryAfter: Duration, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(
            kind: .providerTokenThrottled,
            message: "APNs: TooManyProviderTokenUpdates; keeping the current token for \(retryAfter)",
            httpStatus: 429, retryAfter: retryAfter, providerReason: "TooManyProviderTokenUpdates",
            file: file, line: line)
    }

    /// The provider rejected our credentials (`reason`, HTTP `status`).
    public static func credentialsRejected(
        status: Int, reason: String, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(
            kind: .credentialsRejected, message: "the provider rejected the client's credentials: \(reason)",
            httpStatus: status, providerReason: reason, file: file, line: line)
    }

    /// A client setting named `key` is invalid.
    public static func invalidConfiguration(
        _ key: String, _ problem: String, file: String = #fileID, line: Int = #line
    ) -> ProviderError {
        ProviderError(kind: .invalidConfiguration, message: "\(key): \(problem)", file: file, line: line)
    }

    /// The request's gate closed before it went (`reason`: why it closed).
    public static func gateClosed(_ reason: String, file: String = #fileID, line: Int = #line) -> ProviderError {
        ProviderError(kind: .gateClosed, message: reason, file: file, line: line)
    }

    /// This error with `retryAfter` set.
    func with(retryAfter: Duration?) -> ProviderError {
        var copy = self
        copy.retryAfter = retryAfter
        return copy
    }
}
