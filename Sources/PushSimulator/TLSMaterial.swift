import Crypto
import Foundation
import NIOSSL
import X509

/// The server's TLS identity: certificate chain, key, and the CA clients trust.
struct TLSMaterial {
    let certificateChain: [NIOSSLCertificate]
    let privateKey: NIOSSLPrivateKey
    let caCertificatePEM: String

    /// Makes or loads the identity the configuration asks for.
    static func make(for tls: SimulatorTLS) throws -> TLSMaterial {
        switch tls {
        case .generate:
            return try generate()
        case .files(let chainPath, let keyPath, let caPath):
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(chainPath)
                let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
                let caPEM = try String(contentsOfFile: caPath, encoding: .utf8)
                return TLSMaterial(certificateChain: chain, privateKey: key, caCertificatePEM: caPEM)
            } catch {
                throw SimulatorError.tls("cannot load tls.files (\(chainPath), \(keyPath), \(caPath))", underlying: error)
            }
        }
    }

    /// A fresh CA and a server certificate for localhost, 127.0.0.1 and ::1,
    /// valid from an hour ago for 30 days. The CA's name is unique, so a client
    /// can trust several simulators (say, a production and a sandbox APNs)
    /// through one bundle: OpenSSL finds an issuer by name.
    static func generate() throws -> TLSMaterial {
        do {
            let now = Date()
            let notBefore = now.addingTimeInterval(-3600)
            let notAfter = now.addingTimeInterval(30 * 24 * 3600)

            let caKey = P256.Signing.PrivateKey()
            let caName = try DistinguishedName {
                OrganizationName("PushFleet")
                CommonName("PushFleet Simulator CA \(UInt32.random(in: 0...UInt32.max))")
            }
            let caCertificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
                notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName, subject: caName,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: .init(caKey))

            let serverKey = P256.Signing.PrivateKey()
            let serverName = try DistinguishedName {
                OrganizationName("PushFleet")
                CommonName("localhost")
            }
            let loopbackV6: [UInt8] = Array(repeating: 0, count: 15) + [1]
            let serverCertificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
                notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName, subject: serverName,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames([
                        .dnsName("localhost"),
                        .ipAddress(.init(contentBytes: [127, 0, 0, 1][...])),
                        .ipAddress(.init(contentBytes: loopbackV6[...])),
                    ])
                },
                issuerPrivateKey: .init(caKey))

            let caPEM = try caCertificate.serializeAsPEM().pemString
            let serverPEM = try serverCertificate.serializeAsPEM().pemString
            return TLSMaterial(
                certificateChain: [
                    try NIOSSLCertificate(bytes: Array(serverPEM.utf8), format: .pem),
                    try NIOSSLCertificate(bytes: Array(caPEM.utf8), format: .pem),
                ],
                privateKey: try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem),
                caCertificatePEM: caPEM)
        } catch {
            throw SimulatorError.tls("cannot generate the simulator CA and server certificate", underlying: error)
        }
    }
}
