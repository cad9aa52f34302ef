import Foundation

/// A Google service-account key file (the JSON the Firebase console hands out).
public struct FCMServiceAccount: Sendable, Decodable, Equatable {
    /// Always `service_account`.
    public var type: String
    /// The Firebase/Google Cloud project ID.
    public var projectID: String
    /// The key's ID; the JWT header's `kid`.
    public var privateKeyID: String
    /// The RSA private key, PKCS#8 PEM.
    public var privateKey: String
    /// The account's email; the JWT's `iss`.
    public var clientEmail: String
    /// The OAuth token endpoint; the JWT's `aud`.
    public var tokenURI: String

    private enum CodingKeys: String, CodingKey {
        case type
        case projectID = "project_id"
        case privateKeyID = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    public init(
        projectID: String, privateKeyID: String, privateKey: String, clientEmail: String,
        tokenURI: String = "https://oauth2.googleapis.com/token", type: String = "service_account"
    ) {
        self.type = type
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }

    /// Decodes and validates; a missing or empty field throws
    /// `ProviderError.invalidServiceAccount` naming the JSON key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func field(_ key: CodingKeys) throws -> String {
            let value: String?
            do {
                value = try container.decodeIfPresent(String.self, forKey: key)
            } catch {
                throw ProviderError.invalidServiceAccount("service account \"\(key.rawValue)\" is not a string")
            }
            guard let value, !value.isEmpty else {
                throw ProviderError.invalidServiceAccount("service account is missing \"\(key.rawValue)\"")
            }
            return value
        }
        type = try field(.type)
        guard type == "service_account" else {
            throw ProviderError.invalidServiceAccount(
                "service account \"type\" is \"\(type)\", expected \"service_account\"")
        }
        projectID = try field(.projectID)
        privateKeyID = try field(.privateKeyID)
        privateKey = try field(.privateKey)
        clientEmail = try field(.clientEmail)
        tokenURI = try field(.tokenURI)
    }

    /// Parses a service-account JSON document.
    /// - Throws: `ProviderError.invalidServiceAccount`.
    public init(json: [UInt8]) throws {
        do {
            self = try JSONDecoder().decode(FCMServiceAccount.self, from: Data(json))
        } catch let error as ProviderError {
            throw error
        } catch {
            throw ProviderError.invalidServiceAccount("service account JSON cannot be parsed: \(error)")
        }
    }

    /// Reads and parses a service-account key file.
    /// - Throws: `ProviderError.invalidServiceAccount` naming the path.
    public static func load(path: String) throws -> FCMServiceAccount {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ProviderError.invalidServiceAccount("cannot read service account file \(path): \(error)")
        }
        do {
            return try FCMServiceAccount(json: Array(data))
        } catch let error as ProviderError {
            var named = error
            named.message = "\(path): \(error.message)"
            throw named
        }
    }
}
