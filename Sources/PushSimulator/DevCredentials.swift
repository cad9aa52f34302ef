import Crypto
import Foundation
import _CryptoExtras

/// Dev/test credentials, so nothing needs a real Apple or Google secret.
public enum DevCredentials {
    /// A new APNs signing key: its PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`,
    /// the `.p8` format Apple hands out) and its SPKI public PEM for the simulator.
    public static func makeAPNsKey() -> (privateKeyPEM: String, publicKeyPEM: String) {
        let key = P256.Signing.PrivateKey()
        return (key.pemRepresentation, key.publicKey.pemRepresentation)
    }

    /// A new FCM service-account JSON shaped exactly like the one Google's
    /// console downloads (RSA-2048 key in PKCS#8 PEM, `token_uri` pointing at
    /// the simulator), plus its key ID and public PEM for `SimulatorFCMAccount`.
    public static func makeServiceAccount(
        projectID: String, clientEmail: String, tokenURI: String
    ) throws -> (json: String, privateKeyID: String, publicKeyPEM: String) {
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            throw SimulatorError.tls("cannot generate an RSA-2048 key", underlying: error)
        }
        var random = SystemRandomNumberGenerator()
        let privateKeyID = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }
            .joined()
        let clientID = String(UInt64.random(in: 100_000_000_000_000_000...999_999_999_999_999_999, using: &random))
        let encodedEmail = clientEmail.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? clientEmail
        let fields: [(String, String)] = [
            ("type", "service_account"),
            ("project_id", projectID),
            ("private_key_id", privateKeyID),
            ("private_key", key.pkcs8PEMRepresentation + (key.pkcs8PEMRepresentation.hasSuffix("\n") ? "" : "\n")),
            ("client_email", clientEmail),
            ("client_id", clientID),
            ("auth_uri", "https://accounts.google.com/o/oauth2/auth"),
            ("token_uri", tokenURI),
            ("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"),
            ("client_x509_cert_url", "https://www.googleapis.com/robot/v1/metadata/x509/\(encodedEmail)"),
            ("universe_domain", "googleapis.com"),
        ]
        let json =
            "{\n" + fields.map { "  \(JSONWriter.quoted($0.0)): \(JSONWriter.quoted($0.1))" }.joined(separator: ",\n")
            + "\n}\n"
        return (json, privateKeyID, key.publicKey.pemRepresentation)
    }
}
