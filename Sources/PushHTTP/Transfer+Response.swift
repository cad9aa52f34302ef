import CCurl

extension Transfer {
    /// One header line from curl (status line, header, or the blank end line).
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        // Trim CR/LF as bytes: "\r\n" is one Character in Swift.
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        if line.starts(with: "HTTP/".utf8) {
            // A new response head (an interim 1xx may come first): start over.
            headers.removeAll(keepingCapacity: true)
            status = Self.statusCode(line)
            if status >= 200 { statusReceived = true }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        var name = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        if line[..<colon].contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) { name = name.lowercased() }
        var start = colon + 1
        var stop = line.count
        while start < stop, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
        while stop > start, line[stop - 1] == UInt8(ascii: " ") || line[stop - 1] == UInt8(ascii: "\t") { stop -= 1 }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<stop]), as: UTF8.self)
        headers.append((name: name, value: value))
    }

    /// The status of `HTTP/x[.y] NNN[ reason]`; 0 if it has none.
    static func statusCode(_ line: UnsafeRawBufferPointer) -> Int {
        guard var index = line.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
        var code = 0
        var digits = 0
        for byte in line[index...] {
            if byte == UInt8(ascii: " ") { break }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 else { return 0 }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? code : 0
    }
}

/// CURLOPT_WRITEFUNCTION: appends body bytes to the transfer in `context`.
let transferWriteCallback: curl_write_callback = { buffer, size, count, context in
    let length = size * count
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if let buffer, length > 0 {
        transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: length))
    }
    return length
}

/// CURLOPT_HEADERFUNCTION: parses one header line into the transfer in `context`.
let transferHeaderCallback: curl_write_callback = { buffer, size, count, context in
    let length = size * count
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if let buffer, length > 0 {
        transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length))
    }
    return length
}
