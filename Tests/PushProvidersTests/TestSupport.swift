import Foundation
import PushCore
@testable import PushProviders

/// A clock tests move by hand.
final class ManualClock: @unchecked Sendable {
    // @unchecked Sendable: `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { current = start }

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(seconds: Double) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        lock.unlock()
    }

    var closure: @Sendable () -> Date { { self.now } }
}

/// A decoded compact JWT.
struct DecodedJWT {
    var header: [String: Any]
    var claims: [String: Any]
    var signingInput: String
    var signature: [UInt8]

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any]
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = "\(parts[0]).\(parts[1])"
        self.signature = signature
    }

    /// Verifies an ES256 signature (raw r||s → DER → EVP_DigestVerify).
    func verifiesES256(publicKeyPEM: String) throws -> Bool {
        let key = try EVPKey(pem: publicKeyPEM, kind: .publicKey)
        guard signature.count == 64 else { return false }
        let der = try ECDSASignature.derFromRaw(signature)
        return key.verifySHA256(signature: der, message: Array(signingInput.utf8))
    }

    /// Verifies an RS256 signature.
    func verifiesRS256(publicKeyPEM: String) throws -> Bool {
        let key = try EVPKey(pem: publicKeyPEM, kind: .publicKey)
        return key.verifySHA256(signature: signature, message: Array(signingInput.utf8))
    }
}
