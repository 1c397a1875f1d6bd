import NIOCore

/// Checks the UTF-8 of one text message as its fragments arrive, with the standard library's
/// validation, and makes its `String` once the message is whole without checking it again.
///
/// Each call to ``check(_:isFinal:)`` reads only the bytes it has not read yet, plus at most the
/// three bytes of a character that an earlier fragment cut in two. A byte that can never become
/// valid UTF-8 (whatever follows it) fails the check at once, so a hostile message is refused
/// as soon as its first bad fragment arrives; a fragment that ends in the middle of a valid
/// character does not. Once the message is whole, ``text(of:)`` copies its bytes into a
/// `String` without validating them a second time.
///
/// On Apple systems older than macOS 26 (and their iOS, tvOS, watchOS and visionOS of the same
/// year), which lack `UTF8Span`, the message is checked whole when its last fragment arrives.
struct WebSocketTextValidator {
    /// Bytes from the start of the message known to be whole, valid characters.
    private var checked = 0
    /// Whether every byte checked so far is ASCII (then the string is made as ASCII).
    private var isASCII = true

    init() {}

    /// Checks the bytes of `message` (all of its fragments so far, readable) past those already
    /// checked.
    ///
    /// - Parameters:
    ///   - message: The message's bytes so far.
    ///   - isFinal: Whether the message is whole: a character cut at its end is then invalid.
    /// - Returns: `false` when the bytes can never be valid UTF-8.
    mutating func check(_ message: ByteBuffer, isFinal: Bool) -> Bool {
        guard #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) else {
            guard isFinal else { return true }
            isASCII = false
            return message.withUnsafeReadableBytes { bytes in
                !transcode(bytes.makeIterator(), from: UTF8.self, to: UTF8.self, stoppingOnError: true) { _ in }
            }
        }
        let start = checked
        let outcome = message.withUnsafeReadableBytes { raw -> (checked: Int, isASCII: Bool)? in
            let all = raw.assumingMemoryBound(to: UInt8.self)
            let bytes = UnsafeBufferPointer(rebasing: all[min(start, all.count)...])
            do throws(UTF8.ValidationError) {
                let text = try UTF8Span(validating: bytes.span)
                return (all.count, text.isKnownASCII)
            } catch {
                // A character cut at the end of a fragment: its first bytes were valid so far
                // (a byte that rules out every character would have been reported instead).
                guard !isFinal, error.kind == .truncatedScalar, error.byteOffsets.upperBound == bytes.count else { return nil }
                return (start + error.byteOffsets.lowerBound, false)
            }
        }
        guard let outcome else { return false }
        checked = outcome.checked
        isASCII = isASCII && outcome.isASCII
        return true
    }

    /// The text of `message`, once ``check(_:isFinal:)`` passed it whole: its bytes copied into
    /// a `String`, not validated again.
    func text(of message: ByteBuffer) -> String {
        guard #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) else {
            return String(decoding: message.readableBytesView, as: UTF8.self)
        }
        return message.withUnsafeReadableBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            return String(copying: UTF8Span(unchecked: bytes.span, isKnownASCII: isASCII))
        }
    }

    /// The text of `bytes`, or `nil` when they are not valid UTF-8 (an invalid or overlong
    /// sequence, a surrogate, a code point past U+10FFFF, a truncated character): one message
    /// checked whole.
    static func text(of bytes: ByteBuffer) -> String? {
        var validator = WebSocketTextValidator()
        guard validator.check(bytes, isFinal: true) else { return nil }
        return validator.text(of: bytes)
    }
}
