import Foundation
import NIOSSL
import X509

/// The CA that issues APNs client certificates, as the simulator trusts it.
/// The TLS handshake always succeeds (verification is deferred), so a rejected
/// certificate gets Apple's `403 BadCertificate` answer rather than a TLS alert.
struct ClientCertificateAuthority: Sendable {
    let certificate: Certificate

    /// Parses the CA PEM; the error names the configuration key.
    init(pem: String) throws {
        do {
            certificate = try Certificate(pemEncoded: pem)
        } catch {
            throw SimulatorError.invalidConfiguration("apnsClientCertificateCAPEM", "not a certificate PEM: \(error)")
        }
    }

    /// What the rules need to know about a presented chain (leaf first); nil without one.
    func inspect(_ chain: [NIOSSLCertificate], now: Date) -> SimulatorClientCertificate? {
        guard let first = chain.first else { return nil }
        guard let der = try? first.toDERBytes(), let leaf = try? Certificate(derEncoded: der) else {
            return SimulatorClientCertificate(commonName: "", isTrusted: false)
        }
        let trusted =
            leaf.issuer == certificate.subject && certificate.publicKey.isValidSignature(leaf.signature, for: leaf)
            && leaf.notValidBefore <= now && now <= leaf.notValidAfter
        return SimulatorClientCertificate(commonName: Self.commonName(of: leaf.subject), isTrusted: trusted)
    }

    static func commonName(of name: DistinguishedName) -> String {
        for relative in name {
            for attribute in relative where attribute.type == .RDNAttributeType.commonName {
                if let value = String(attribute.value) { return value }
            }
        }
        return ""
    }
}
