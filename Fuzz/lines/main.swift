import Foundation

// Fuzz target for LineSplitter (Sources/Moya/Streaming/Parsing).
//
// Input: two header bytes, then the stream.
// - byte 0: the line limit: 1...128 bytes when below 0x80, else the default (1 MiB);
// - byte 1: the seed that cuts the stream into chunks (see chunkRanges).
//
// Properties:
// - without an error, the stream split whole, in the seed's chunks (through the four `split`
//   overloads in turn) and byte by byte gives the lines and the last unterminated line that a
//   plain reference gives: lines end at LF, CRLF or CR, each line decoded as UTF-8 on its own;
// - a line beyond the limit, unterminated or not, throws `lineTooLong` however the stream is
//   cut, the lines returned before it are a prefix of the reference's, the error sticks until
//   `finish()`, and `finish()` then returns nothing;
// - after `finish()` the splitter starts a new stream: the same stream gives the same result.

/// What splitting a stream gave, strings kept as their UTF-8 bytes: `String`'s `==` would take
/// canonically equivalent lines for equal.
private struct Outcome: Equatable {
    var lines: [[UInt8]] = []
    var error: StreamingLimitError?
    /// What `finish()` returned.
    var last: [UInt8]?

    mutating func append(_ lines: [String]) {
        self.lines += lines.map { Array($0.utf8) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let input = inputBytes(data, size)
    let limit = input[0] < 0x80 ? Int(input[0]) + 1 : LineSplitter.defaultMaximumLineLength
    let stream = Array(input[2...])
    let expected = reference(stream, limit: limit)

    var splitter = LineSplitter(maximumLineLength: limit)
    let whole = split(stream, in: [0..<stream.count], with: &splitter)
    requireAgreement(whole, expected, "whole stream \(show(stream))")
    let again = split(stream, in: [0..<stream.count], with: &splitter)
    require(again == whole, "the same stream after finish() \(show(stream)): \(again) instead of \(whole)")

    var chunkSplitter = LineSplitter(maximumLineLength: limit)
    let chunked = split(stream, in: chunkRanges(count: stream.count, seed: input[1]), with: &chunkSplitter)
    requireAgreement(chunked, expected, "stream \(show(stream)) in chunks of seed \(input[1])")

    var byteSplitter = LineSplitter(maximumLineLength: limit)
    let byByte = split(stream, in: stream.indices.map { $0..<($0 + 1) }, with: &byteSplitter)
    requireAgreement(byByte, expected, "stream \(show(stream)) byte by byte")
    return 0
}

/// Requires `outcome` to be `expected`, or when the stream fails, the same error after a prefix
/// of its lines (the lines of the chunk that throws are lost).
private func requireAgreement(_ outcome: Outcome, _ expected: Outcome, _ context: @autoclosure () -> String) {
    if expected.error == nil {
        require(outcome == expected, "\(context()): \(outcome) instead of \(expected)")
    } else {
        require(
            outcome.error == expected.error && outcome.last == nil && isPrefix(outcome.lines, of: expected.lines),
            "\(context()): \(outcome) instead of \(expected) or a prefix of its lines")
    }
}

/// Splits `stream` cut at `ranges`, each chunk through one of the `split` overloads in turn,
/// until the first error; checks that an error sticks; then calls `finish()`.
private func split(_ stream: [UInt8], in ranges: [Range<Int>], with splitter: inout LineSplitter) -> Outcome {
    var outcome = Outcome()
    chunks: for (index, range) in ranges.enumerated() {
        let chunk = stream[range]
        do throws(StreamingLimitError) {
            switch index % 4 {
            case 0:
                // The standard library's `withUnsafeBytes` rethrows untyped errors.
                let copy = Array(chunk)
                outcome.append(
                    try copy.withUnsafeBytes { bytes in
                        Result { () throws(StreamingLimitError) in try splitter.split(bytes) }
                    }.get())
            case 1: outcome.append(try splitter.split(Data(chunk)))
            case 2: outcome.append(try splitter.split(chunk))
            default: outcome.append(try splitter.split(chunk.lazy.map { $0 }))
            }
        } catch {
            outcome.error = error
            break chunks
        }
    }
    if let error = outcome.error {
        var thrown: StreamingLimitError?
        let lineBreak: [UInt8] = [UInt8(ascii: "\n")]
        do throws(StreamingLimitError) {
            _ = try splitter.split(lineBreak)
        } catch {
            thrown = error
        }
        require(thrown == error, "after \(error), the next chunk threw \(String(describing: thrown))")
    }
    outcome.last = splitter.finish().map { Array($0.utf8) }
    return outcome
}

/// The lines of a whole stream, read plainly: a line ends at LF, CR followed by LF, or CR; its
/// bytes are decoded on their own. A line longer than `limit` bytes, the unterminated last one
/// included, makes the stream fail.
private func reference(_ stream: [UInt8], limit: Int) -> Outcome {
    var outcome = Outcome()
    let (lines, rest, tooLong) = referenceLines(stream, limit: limit)
    for line in lines {
        outcome.append([String(decoding: line, as: UTF8.self)])
    }
    guard !tooLong else {
        outcome.error = .lineTooLong(limit: limit)
        return outcome
    }
    outcome.last = rest.isEmpty ? nil : Array(String(decoding: rest, as: UTF8.self).utf8)
    return outcome
}
