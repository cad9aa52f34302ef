import CCurl
import CShims

extension Transfer {
    /// One header line from curl (status line, header, or the blank end line).
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        // Trim CR/LF as bytes: "\r\n" is one Character in Swift.
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        if line.starts(with: "HTTP/".utf8) {
            // The server answered on this connection, so its SETTINGS (its first frame) are known.
            if holdsSlot, let slot { slot.settle() }
            // A new response head (an interim 1xx may come first): start over.
            headers.removeAll(keepingCapacity: true)
            headerBytes = 0
            status = Self.statusCode(line)
            if status >= 200 { statusReceived = true }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        guard headers.count < HTTPResponse.maxHeaders, headerBytes + line.count <= HTTPResponse.maxHeaderBytes else {
            droppedHeaders += 1
            return
        }
        headerBytes += line.count
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

extension Transfer {
    /// curl is about to send the request on the connection with these ports
    /// (`CURLOPT_PREREQFUNCTION`: once per attempt, after the connection is
    /// set up or picked for reuse). Returns false to turn the attempt back
    /// unsent: another request already waits on that connection for its first
    /// answer, i.e. for the server's SETTINGS.
    func aboutToSend(localPort: Int, remotePort: Int, remoteIP: UnsafePointer<CChar>? = nil) -> Bool {
        if holdsSlot, let slot { slot.inUse -= 1 }
        holdsSlot = false
        guard let connections else {
            attempts += 1
            return true
        }
        let next = connections.slot(
            localPort: localPort, remotePort: remotePort, remoteIPHash: ConnectionBook.hash(remoteIP), hostKey: hostKey)
        if !next.settled && next.inUse >= 1 {
            deferred = true
            return false
        }
        if attempts > 0 {
            // curl re-sends by itself only when nothing at all came back: the
            // stream was refused unprocessed (above a GOAWAY's last-stream-id,
            // or REFUSED_STREAM) or the connection died under it.
            if slot?.wasReset == true { resends.reset += 1 } else { resends.goaway += 1 }
        }
        attempts += 1
        next.inUse += 1
        slot = next
        holdsSlot = true
        return true
    }

    /// The transfer left curl: its connection no longer carries it.
    func leaveSlot() {
        leaveSlotKeepingLast()
        slot = nil
    }

    /// Turned back unsent: no connection carries it, but the last attempt's
    /// connection still tells why a later attempt is a re-send.
    func leaveSlotKeepingLast() {
        if holdsSlot, let slot { slot.inUse -= 1 }
        holdsSlot = false
    }
}

/// CURLOPT_PREREQFUNCTION: lets an attempt go ahead or turns it back (see `Transfer.aboutToSend`).
let transferPrereqCallback: curl_prereq_callback = { context, remoteIP, _, remotePort, localPort in
    guard let context else { return CShims_CURL_PREREQFUNC_OK() }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.aboutToSend(localPort: Int(localPort), remotePort: Int(remotePort), remoteIP: remoteIP)
        ? CShims_CURL_PREREQFUNC_OK() : CShims_CURL_PREREQFUNC_ABORT()
}

/// CURLOPT_WRITEFUNCTION: appends body bytes to the transfer in `context`.
let transferWriteCallback: curl_write_callback = { buffer, size, count, context in
    let length = size * count
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if let buffer, length > 0 {
        // Up to the limit; the rest is consumed (returned as written) and counted.
        let kept = min(length, max(0, HTTPResponse.maxBodyBytes - transfer.body.count))
        if kept > 0 { transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: kept)) }
        transfer.droppedBodyBytes += length - kept
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
