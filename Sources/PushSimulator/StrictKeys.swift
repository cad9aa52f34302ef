/// Any key of a JSON object: lets a decoder list the keys a file actually holds.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// The `debugDescription` of the error for a key no type declares; `SimulatorConfiguration.load` reports it as such.
let unknownKeyDescription = "unknown key"

extension Decoder {
    /// Throws for the first key (in sorted order) of this JSON object that `known` does not declare: a
    /// misspelt key in a configuration file is an error rather than a default silently applied.
    func rejectUnknownKeys(_ known: any CodingKey.Type) throws {
        try container(keyedBy: AnyCodingKey.self).rejectUnknownKeys(known)
    }

    /// The same for an enum with associated values in its synthesized form, `{"<case>": {<arguments>}}`
    /// (synthesized decoding ignores an argument it does not know): `cases` are the enum's keys,
    /// `arguments` gives each case's argument keys.
    func rejectUnknownKeys<Cases: CodingKey>(cases: Cases.Type, arguments: (Cases) -> any CodingKey.Type) throws {
        let object = try container(keyedBy: AnyCodingKey.self)
        try object.rejectUnknownKeys(cases)
        for key in object.allKeys {
            guard let enumCase = Cases(stringValue: key.stringValue) else { continue }
            try object.nestedContainer(keyedBy: AnyCodingKey.self, forKey: key).rejectUnknownKeys(arguments(enumCase))
        }
    }
}

extension KeyedDecodingContainer where K == AnyCodingKey {
    /// As `Decoder.rejectUnknownKeys`, for a container already open.
    func rejectUnknownKeys(_ known: any CodingKey.Type) throws {
        for key in allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where known.init(stringValue: key.stringValue) == nil {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: unknownKeyDescription))
        }
    }
}
