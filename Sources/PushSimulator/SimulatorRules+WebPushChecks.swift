import Crypto
import Foundation
import PushCore

/// Why the Web Push endpoint refuses a request.
struct WebPushFailure: Error {
    let status: Int
    let reason: String
    let message: String
}

/// The Web Push endpoint's VAPID check (RFC 8292) and its decryption
/// (RFC 8291 on RFC 8188), written with swift-crypto: an implementation
/// independent of the sender's OpenSSL one, so agreeing proves both.
extension SimulatorRules {
    /// The base64url `k` of a valid `vapid t=…, k=…` credential, or why it is refused.
    func checkVAPID(_ header: String?, now: Date) -> Result<String, WebPushFailure> {
        func refuse(_ status: Int, _ reason: String, _ message: String) -> Result<String, WebPushFailure> {
            .failure(WebPushFailure(status: status, reason: reason, message: message))
        }
        guard let header else { return refuse(401, "MissingVAPID", "Authorization: vapid t=…, k=… is required") }
        let trimmed = header.drop(while: { $0 == " " })
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "vapid " else {
            return refuse(401, "MissingVAPID", "the Authorization scheme must be vapid")
        }
        var token: Substring?
        var key: Substring?
        for part in trimmed.dropFirst(6).split(separator: ",") {
            let parameter = part.drop(while: { $0 == " " })
            if parameter.hasPrefix("t=") { token = parameter.dropFirst(2) }
            if parameter.hasPrefix("k=") { key = parameter.dropFirst(2) }
        }
        guard let token, let key else { return refuse(403, "BadVAPIDHeader", "vapid needs both t= and k=") }
        let trimmedKey = key.prefix(while: { $0 != " " })
        guard let keyBytes = Base64URL.decode(trimmedKey), keyBytes.count == 65,
            let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else { return refuse(403, "BadVAPIDKey", "k is not a base64url uncompressed P-256 public key") }
        if !webPush.allowedKeys.isEmpty, !webPush.allowedKeys.contains(keyBytes) {
            return refuse(403, "VAPIDKeyNotAllowed", "k is not the application server key of this subscription")
        }
        guard let jwt = JWT(token.prefix(while: { $0 != " " })) else {
            return refuse(403, "BadJWT", "t is not a compact JWT")
        }
        guard jwt.algorithm == "ES256" else { return refuse(403, "BadJWT", "the JWT alg must be ES256") }
        if let type = jwt.header["typ"]?.stringValue, type.uppercased() != "JWT" {
            return refuse(403, "BadJWT", "the JWT typ must be JWT")
        }
        guard jwt.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jwt.signature),
            publicKey.isValidSignature(signature, for: jwt.signingInput)
        else { return refuse(403, "BadJWTSignature", "the JWT signature does not verify with k") }
        guard let audience = jwt.claims["aud"]?.stringValue, isOwnOrigin(audience) else {
            return refuse(403, "BadAudience", "aud must be this push service's origin")
        }
        let expiry: Int64?
        switch jwt.claims["exp"] {
        case .int(let value)?: expiry = value
        case .double(let value)?: expiry = Int64(exactly: value)
        default: expiry = nil
        }
        guard let expiry else { return refuse(403, "BadExpiry", "exp must be a NumericDate") }
        let nowSeconds = Self.seconds(since: now)
        guard expiry > nowSeconds else { return refuse(403, "ExpiredJWT", "the JWT has expired") }
        let (ahead, overflow) = expiry.subtractingReportingOverflow(nowSeconds)
        guard !overflow, ahead <= Self.webPushMaxLifetime else {
            return refuse(403, "BadExpiry", "exp is more than 24 hours ahead")
        }
        guard let subject = jwt.claims["sub"]?.stringValue,
            subject.lowercased().hasPrefix("mailto:") || subject.lowercased().hasPrefix("https:")
        else { return refuse(403, "BadSubject", "sub must be a mailto: or https: URI") }
        return .success(String(trimmedKey))
    }

    /// An https origin (no path, query or fragment) on this server's port (once known).
    private func isOwnOrigin(_ audience: String) -> Bool {
        guard let components = URLComponents(string: audience), components.scheme == "https",
            let host = components.host, !host.isEmpty, components.path.isEmpty, components.query == nil,
            components.fragment == nil, components.user == nil
        else { return false }
        let port = serverPort
        return port == 0 || (components.port ?? 443) == port
    }

    /// The plaintext of a single-record `aes128gcm` body sent to subscription `id`.
    static func decryptWebPush(_ body: [UInt8], subscriptionID id: String) -> Result<[UInt8], WebPushFailure> {
        func refuse(_ message: String) -> Result<[UInt8], WebPushFailure> {
            .failure(WebPushFailure(status: 400, reason: "DecryptionFailed", message: message))
        }
        guard body.count >= 21 else { return refuse("the body is shorter than the aes128gcm header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { ($0 << 8) | Int($1) }
        guard body[20] == 65, body.count >= 86 else {
            return refuse("keyid must be the 65-byte application server public key")
        }
        let keyID = Array(body[21..<86])
        let record = body[86...]
        guard recordSize >= 18 else { return refuse("rs below 18") }
        guard record.count > 16 else { return refuse("no record after the header") }
        guard record.count <= recordSize else { return refuse("more than one record") }
        let subscription = SimulatorWebPushSubscriptions.keys(id: id)
        let padded: [UInt8]
        do {
            let serverKey = try P256.KeyAgreement.PublicKey(x963Representation: keyID)
            let shared = try subscription.privateKey.sharedSecretFromKeyAgreement(with: serverKey)
            let info =
                Array("WebPush: info".utf8) + [0] + Array(subscription.privateKey.publicKey.x963Representation) + keyID
            let ikm = shared.hkdfDerivedSymmetricKey(
                using: SHA256.self, salt: subscription.auth, sharedInfo: info, outputByteCount: 32)
            let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
            let cek = HKDF<SHA256>.expand(
                pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
            let nonce = HKDF<SHA256>.expand(
                pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }), ciphertext: record.dropLast(16),
                tag: record.suffix(16))
            padded = Array(try AES.GCM.open(box, using: cek))
        } catch {
            return refuse("the body does not decrypt with the subscription's key: \(error)")
        }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }) else { return refuse("no padding delimiter") }
        guard padded[delimiter] == 0x02 else { return refuse("the padding delimiter is not 0x02") }
        return .success(Array(padded[..<delimiter]))
    }
}
