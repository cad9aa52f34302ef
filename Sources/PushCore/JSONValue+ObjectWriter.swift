extension JSONValue {
    /// Writes the members of one JSON object straight to bytes (its braces
    /// are the caller's), commas between: the direct payload writers' way of
    /// giving the bytes `write(into:)` gives for the same members.
    struct ObjectWriter {
        var isEmpty = true

        /// `"key":`, after a comma unless it is the first member.
        mutating func key(_ key: String, into out: inout [UInt8]) {
            if !isEmpty { out.append(UInt8(ascii: ",")) }
            isEmpty = false
            JSONValue.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
        }

        mutating func member(_ key: String, _ value: JSONValue, into out: inout [UInt8]) {
            self.key(key, into: &out)
            value.write(into: &out)
        }

        /// `"key":{…}` with the members `body` writes; when it writes none and
        /// `dropIfEmpty`, nothing at all (as a tree that leaves out an empty block).
        mutating func object(_ key: String, dropIfEmpty: Bool = false, into out: inout [UInt8],
                             _ body: (inout ObjectWriter, inout [UInt8]) -> Void) {
            let start = out.count
            let wasEmpty = isEmpty
            self.key(key, into: &out)
            out.append(UInt8(ascii: "{"))
            var members = ObjectWriter()
            body(&members, &out)
            if dropIfEmpty && members.isEmpty {
                out.removeSubrange(start...)
                isEmpty = wasEmpty
            } else {
                out.append(UInt8(ascii: "}"))
            }
        }
    }
}
