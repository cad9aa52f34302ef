import CCurl

/// A request's header lines as a `curl_slist` for `CURLOPT_HTTPHEADER`, built
/// in one allocation (nodes, then the NUL-terminated lines) instead of one
/// `curl_slist_append` (two mallocs) per line. curl only reads the list; the
/// owner frees it with `deallocate()` once curl has let go of the transfer.
///
/// Besides the request's own headers it carries `Content-Type:` and `Accept:`
/// (unless the request sets them) and `Expect:`, which drop curl's defaults.
struct HeaderList {
    /// The first node; `nil` never happens (there is always `Expect:`).
    let head: UnsafeMutablePointer<curl_slist>
    private let storage: UnsafeMutableRawPointer
    /// False when a header's name or value holds CR, LF or NUL: libcurl would
    /// split the line there (a header nobody asked for) or end it (a cut one).
    /// Checked as the bytes are copied, so a request pays no second pass.
    let isSendable: Bool

    init(_ headers: [(name: String, value: String)]) {
        var hasContentType = false
        var hasAccept = false
        var textBytes = 0
        for header in headers {
            if !hasContentType, Self.equalsLowercased(header.name, "content-type") { hasContentType = true }
            if !hasAccept, Self.equalsLowercased(header.name, "accept") { hasAccept = true }
            textBytes += header.name.utf8.count + 2 + header.value.utf8.count + 1
        }
        // Visited twice (size, then write) rather than kept in a heap-allocated array.
        func forEachExtra(_ body: (StaticString) -> Void) {
            if !hasContentType { body("Content-Type:") }
            if !hasAccept { body("Accept:") }
            body("Expect:")
        }
        var extraCount = 0
        forEachExtra { extra in
            textBytes += extra.utf8CodeUnitCount + 1
            extraCount += 1
        }

        let count = headers.count + extraCount
        let nodeBytes = count * MemoryLayout<curl_slist>.stride
        storage = UnsafeMutableRawPointer.allocate(byteCount: nodeBytes + textBytes, alignment: MemoryLayout<curl_slist>.alignment)
        let nodes = storage.bindMemory(to: curl_slist.self, capacity: count)
        var text = (storage + nodeBytes).bindMemory(to: UInt8.self, capacity: textBytes)
        var index = 0
        func addNode(_ line: UnsafeMutablePointer<UInt8>) {
            let next = index + 1 < count ? nodes + index + 1 : nil
            (nodes + index).initialize(to: curl_slist(data: UnsafeMutableRawPointer(line).assumingMemoryBound(to: CChar.self), next: next))
            index += 1
        }
        var sendable = true
        func write(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            for byte in bytes where byte <= 0x0D && (byte == 0x0D || byte == 0x0A || byte == 0) { sendable = false }
            text.update(from: base, count: bytes.count)
            text += bytes.count
        }
        func write(_ string: String) {
            // Native strings are contiguous UTF-8: read in place, without the copy
            // (and retain) that `withUTF8` on a `var` needs; others are copied once.
            if string.utf8.withContiguousStorageIfAvailable({ write($0) }) == nil {
                var copy = string
                copy.withUTF8 { write($0) }
            }
        }
        func writeByte(_ byte: UInt8) {
            text.pointee = byte
            text += 1
        }
        for header in headers {
            let line = text
            write(header.name)
            writeByte(UInt8(ascii: ":"))
            writeByte(UInt8(ascii: " "))
            write(header.value)
            writeByte(0)
            addNode(line)
        }
        forEachExtra { extra in
            let line = text
            write(UnsafeBufferPointer(start: extra.utf8Start, count: extra.utf8CodeUnitCount))
            writeByte(0)
            addNode(line)
        }
        head = nodes
        isSendable = sendable
    }

    func deallocate() { storage.deallocate() }

    /// ASCII case-insensitive `name == lowercased`, without allocating.
    static func equalsLowercased(_ name: String, _ lowercased: StaticString) -> Bool {
        guard name.utf8.count == lowercased.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercased.utf8Start, count: lowercased.utf8CodeUnitCount)
        return zip(name.utf8, expected).allSatisfy { a, b in
            (a >= UInt8(ascii: "A") && a <= UInt8(ascii: "Z") ? a | 0x20 : a) == b
        }
    }
}
