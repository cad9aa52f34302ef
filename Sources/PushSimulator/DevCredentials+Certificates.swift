import Crypto
import Foundation
import X509

extension DevCredentials {
    /// A new CA for APNs client certificates: give its certificate PEM to
    /// `SimulatorConfiguration.apnsClientCertificateCAPEM` and issue client
    /// certificates with `makeAPNsClientCertificate`.
    public static func makeClientCertificateAuthority() throws -> (certificatePEM: String, privateKeyPEM: String) {
        do {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                OrganizationName("PushFleet")
                CommonName("PushFleet APNs Client CA")
            }
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 24 * 3600),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: .init(key))
            return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
        } catch {
            throw SimulatorError.tls("cannot make the client certificate CA", underlying: error)
        }
    }

    /// An APNs client certificate for `bundleID`, named as Apple names them:
    /// `Apple Development IOS Push Services: …` (sandbox), `Apple Production IOS
    /// Push Services: …` (production) or `Apple Push Services: …` (nil: both).
    /// `validFor` may be negative to make an expired one.
    public static func makeAPNsClientCertificate(
        bundleID: String, environment: SimulatorAPNsEnvironment?, issuerCertificatePEM: String,
        issuerPrivateKeyPEM: String, validFor: TimeInterval = 30 * 24 * 3600
    ) throws -> (certificatePEM: String, privateKeyPEM: String) {
        let prefix: String
        switch environment {
        case .sandbox: prefix = "Apple Development IOS Push Services"
        case .production: prefix = "Apple Production IOS Push Services"
        case nil: prefix = "Apple Push Services"
        }
        do {
            let issuer = try Certificate(pemEncoded: issuerCertificatePEM)
            let issuerKey = try P256.Signing.PrivateKey(pemRepresentation: issuerPrivateKeyPEM)
            let key = P256.Signing.PrivateKey()
            let subject = try DistinguishedName {
                OrganizationName("PushFleet")
                CommonName("\(prefix): \(bundleID)")
            }
            let now = Date()
            let notAfter = now.addingTimeInterval(validFor)
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                notValidBefore: min(now, notAfter).addingTimeInterval(-3600), notValidAfter: notAfter,
                issuer: issuer.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.clientAuth])
                },
                issuerPrivateKey: .init(issuerKey))
            return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
        } catch {
            throw SimulatorError.tls("cannot make an APNs client certificate", underlying: error)
        }
    }
}
