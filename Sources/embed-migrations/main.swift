// Writes the Swift file that carries PushFleet's SQL migrations inside
// PushPostgres: `embed-migrations OUTPUT.swift FILE.sql...`, run by the
// EmbedMigrations build plugin (Sources/EmbedMigrations) on every build.
// Each file becomes a string literal whose UTF-8 is the file's bytes, so
// the checksum `schema_migrations` records is the same from either source.
import Foundation

/// `text` as a Swift string literal: quotes, backslashes and control
/// characters escaped, everything else (UTF-8 included) as it is.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("embed-migrations: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let output = arguments.first else { fail("usage: embed-migrations OUTPUT.swift FILE.sql...") }
var source = """
    // Generated on every build by the EmbedMigrations plugin from schemas/postgres/*.sql,
    // the one source of the SQL: never edited, never committed.

    enum EmbeddedMigrations {
        /// (file name, contents) of every migration file, in file-name order.
        static let files: [(name: String, sql: String)] = [

    """
for path in arguments.dropFirst().sorted() {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    let text = String(decoding: data, as: UTF8.self)
    // Refused here as the migrator refuses such a file from a directory.
    guard Array(text.utf8) == [UInt8](data), !data.contains(0) else { fail("\(path) is not UTF-8 text without NUL") }
    source += "        (\(literal(URL(fileURLWithPath: path).lastPathComponent)), \(literal(text))),\n"
}
source += "    ]\n}\n"
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
} catch {
    fail("cannot write \(output): \(error)")
}
