import Foundation

// Helpers compiled into every fuzz target (see scripts/fuzz.sh); not part of the Moya module.

/// Stops the process when a property does not hold, after printing `message`: libFuzzer then
/// writes the input to a `crash-…` file.
///
/// - Parameters:
///   - condition: The property.
///   - message:   What failed, with the values involved.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    guard condition else {
        let text = "property failed at \(file):\(line): \(message())\n"
        FileHandle.standardError.write(Data(text.utf8))
        fatalError("property failed", file: file, line: line)
    }
}

/// The bytes libFuzzer hands to `LLVMFuzzerTestOneInput`, copied.
func inputBytes(_ data: UnsafePointer<UInt8>, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}

/// A small deterministic generator (SplitMix64), so that an input always gives the same run.
struct FuzzRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0...upper`.
    mutating func next(upTo upper: Int) -> Int {
        Int(next() % UInt64(upper + 1))
    }
}

/// Cuts `count` bytes into consecutive ranges whose lengths `seed` chooses, empty ranges
/// included, so that the same seed always cuts the same way. The largest chunk the seed allows
/// is between 1 and 64 bytes.
func chunkRanges(count: Int, seed: UInt8) -> [Range<Int>] {
    var random = FuzzRandom(seed: UInt64(seed))
    let largest = 1 + Int(seed & 0x3F)
    var ranges: [Range<Int>] = []
    var start = 0
    while start < count {
        let length = min(random.next(upTo: largest), count - start)
        ranges.append(start..<(start + length))
        start += length
    }
    return ranges
}

/// The lines of a whole stream, read plainly, the oracle of the line-based targets: a line ends
/// at LF, CR followed by LF, or CR. Returns the terminated lines in order and the unterminated
/// rest; reading stops at the first line (the rest included) longer than `limit` bytes, which
/// `tooLong` then reports, and `lines` holds those before it.
func referenceLines(_ stream: [UInt8], limit: Int) -> (lines: [[UInt8]], rest: [UInt8], tooLong: Bool) {
    var lines: [[UInt8]] = []
    var line: [UInt8] = []
    var index = 0
    while index < stream.count {
        let byte = stream[index]
        index += 1
        guard byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") else {
            line.append(byte)
            continue
        }
        if byte == UInt8(ascii: "\r"), index < stream.count, stream[index] == UInt8(ascii: "\n") { index += 1 }
        guard line.count <= limit else { return (lines, [], true) }
        lines.append(line)
        line = []
    }
    return (lines, line, line.count > limit)
}

/// Whether `prefix` is the start of `array`.
func isPrefix<Element: Equatable>(_ prefix: [Element], of array: [Element]) -> Bool {
    prefix.count <= array.count && zip(prefix, array).allSatisfy { $0 == $1 }
}

/// `bytes` as a string for messages: printable ASCII as it is, other bytes as `\xNN`.
func show(_ bytes: some Sequence<UInt8>) -> String {
    var text = ""
    for byte in bytes {
        if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
            text.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            text += byte < 0x10 ? "\\x0" : "\\x"
            text += String(byte, radix: 16, uppercase: true)
        }
    }
    return text
}
