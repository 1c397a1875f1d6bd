/// What every connection of a turn sends: messages of one size, binary or text.
///
/// Binary messages are pattern bytes (byte `i` is `i % 251`). Text messages are lines of 64
/// bytes, each 61 printable ASCII characters, an `é` (two bytes) and a newline: mostly ASCII, as
/// JSON and chat text are, with enough other characters that a client's UTF-8 check cannot take
/// its all-ASCII shortcut for long.
struct EchoPayload: Sendable {
    /// The size of every message, in bytes.
    let size: Int
    /// Whether the messages are text (else binary).
    let isText: Bool

    /// The message's bytes: ``size`` of them, valid UTF-8 when ``isText``.
    var bytes: [UInt8] {
        isText ? Self.textBytes(size) : patternBytes(size)
    }

    /// `count` bytes of text lines (see the type's description); a line cut at the end ends in
    /// ASCII, so the text stays valid UTF-8 whatever `count` is.
    static func textBytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var line = 0
        while bytes.count < count {
            for column in 0..<61 { bytes.append(UInt8(32 + (line + column) % 95)) }
            bytes += [0xC3, 0xA9, 0x0A]
            line += 1
        }
        // Cut before a lone first byte of the `é`.
        var end = count
        if end > 0, bytes[end - 1] == 0xC3 { end -= 1 }
        bytes.removeSubrange(end...)
        while bytes.count < count { bytes.append(0x2E) }
        return bytes
    }

    /// The text of ``bytes``; only for text payloads.
    var text: String {
        String(decoding: bytes, as: UTF8.self)
    }
}
