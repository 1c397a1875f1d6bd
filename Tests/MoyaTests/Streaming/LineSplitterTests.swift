import Foundation
import Testing

@testable import Moya

/// Splits `bytes` cut into chunks of the given sizes (the rest in one last chunk), then ends the
/// stream; returns every line, the last one without a line break included.
func splitLines(_ bytes: [UInt8], chunkSizes: [Int] = [], maximumLineLength: Int = LineSplitter.defaultMaximumLineLength) throws -> [String] {
    var splitter = LineSplitter(maximumLineLength: maximumLineLength)
    var lines: [String] = []
    var start = 0
    for size in chunkSizes where start < bytes.count {
        let end = min(bytes.count, start + size)
        lines += try splitter.split(bytes[start..<end])
        start = end
    }
    lines += try splitter.split(bytes[start...])
    if let last = splitter.finish() { lines.append(last) }
    return lines
}

@Suite("LineSplitter")
struct LineSplitterTests {
    /// Streams and their lines (the last one being what `finish()` returns, if anything).
    static let cases: [(name: String, bytes: [UInt8], lines: [String])] = [
        ("empty", [], []),
        ("LF", Array("a\nb\n".utf8), ["a", "b"]),
        ("CRLF", Array("a\r\nb\r\n".utf8), ["a", "b"]),
        ("CR", Array("a\rb\r".utf8), ["a", "b"]),
        ("mixed", Array("a\r\nb\nc\rd".utf8), ["a", "b", "c", "d"]),
        ("LF CR is two breaks", Array("a\n\rb".utf8), ["a", "", "b"]),
        ("CR CR LF is two breaks", Array("a\r\r\nb".utf8), ["a", "", "b"]),
        ("empty lines", Array("\n\n\r\n\r".utf8), ["", "", "", ""]),
        ("no line break at the end", Array("a\nlast".utf8), ["a", "last"]),
        ("a BOM is kept", Array("\u{FEFF}a\n".utf8), ["\u{FEFF}a"]),
        ("other separators do not break lines", Array("a\u{2028}b\u{85}c\u{0B}d\u{0C}e\n".utf8), ["a\u{2028}b\u{85}c\u{0B}d\u{0C}e"]),
        ("invalid UTF-8", [0x61, 0xFF, 0x0A, 0xE2, 0x82, 0x0A, 0xC0, 0xAF], ["a\u{FFFD}", "\u{FFFD}", "\u{FFFD}\u{FFFD}"]),
        ("multibyte", Array("é€😀\n日本".utf8), ["é€😀", "日本"]),
        ("NUL is a character", [0x61, 0x00, 0x62, 0x0A], ["a\u{0}b"]),
    ]

    @Test("the table, in one chunk, byte by byte and at every split point")
    func table() throws {
        for row in Self.cases {
            #expect(try splitLines(row.bytes) == row.lines, "\(row.name)")
            #expect(try splitLines(row.bytes, chunkSizes: Array(repeating: 1, count: row.bytes.count)) == row.lines, "\(row.name), byte by byte")
            for split in 0...row.bytes.count {
                #expect(try splitLines(row.bytes, chunkSizes: [split]) == row.lines, "\(row.name), split at \(split)")
            }
        }
    }

    @Test("a CR at the end of a chunk and a LF at the start of the next are one line break")
    func crlfAcrossChunks() throws {
        var splitter = LineSplitter()
        #expect(try splitter.split(Array("a\r".utf8)) == ["a"])
        #expect(try splitter.split(Array("\nb\r".utf8)) == ["b"], "the LF ends the first CR's break")
        #expect(try splitter.split(Array("\r".utf8)) == [""])
        #expect(try splitter.split(Array("\n".utf8)) == [], "the LF ends the third CR's break")
        #expect(try splitter.split(Array("\n".utf8)) == [""])
        #expect(splitter.finish() == nil)
    }

    @Test("random text: any chunking gives the lines of one chunk")
    func randomChunkings() throws {
        var random = SplitMix64(seed: 0x11_4E5)
        let pieces: [[UInt8]] = ["\r", "\n", "\r\n", "a", "bc", "é", "😀", "\u{FEFF}", " "].map { Array($0.utf8) } + [[0xFF], [0xE2, 0x82]]
        for round in 0..<300 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 30) { bytes += pieces[Int(random.next() % UInt64(pieces.count))] }
            let whole = try splitLines(bytes)
            // The plain reading: decode everything, then split the scalars.
            var expected: [String] = []
            var current = ""
            var scalars = String(decoding: bytes, as: UTF8.self).unicodeScalars[...]
            while let scalar = scalars.popFirst() {
                if scalar == "\r" || scalar == "\n" {
                    expected.append(current)
                    current = ""
                    if scalar == "\r", scalars.first == "\n" { scalars.removeFirst() }
                } else {
                    current.unicodeScalars.append(scalar)
                }
            }
            if !current.isEmpty { expected.append(current) }
            #expect(whole == expected, "round \(round): \(bytes)")
            var sizes: [Int] = []
            while sizes.reduce(0, +) < bytes.count { sizes.append(1 + Int(random.next() % 5)) }
            #expect(try splitLines(bytes, chunkSizes: sizes) == expected, "round \(round), chunks \(sizes)")
        }
    }

    @Test("Data, [UInt8], a non-contiguous sequence and a raw buffer give the same lines")
    func overloads() throws {
        let bytes = Array("one\r\ntwo\rthree\n".utf8)
        var splitter = LineSplitter()
        #expect(try splitter.split(Data(bytes)) == ["one", "two", "three"])
        #expect(try splitter.split(bytes) == ["one", "two", "three"])
        #expect(try splitter.split(bytes.lazy.map { $0 }) == ["one", "two", "three"])
        #expect(try bytes.withUnsafeBytes { (buffer) throws(StreamingLimitError) in try splitter.split(buffer) } == ["one", "two", "three"])
    }

    @Test("a line longer than the limit throws in any chunking; the error sticks until finish()")
    func lineLimit() throws {
        let fits = Array(repeating: UInt8(ascii: "a"), count: 8)
        #expect(try splitLines(fits + [0x0D, 0x0A] + fits, maximumLineLength: 8) == ["aaaaaaaa", "aaaaaaaa"])
        for chunkSize in [1, 3, 9, 100] {
            #expect(throws: StreamingLimitError.lineTooLong(limit: 8), "chunks of \(chunkSize)") {
                try splitLines(fits + [0x0A] + fits + [0x61, 0x0A], chunkSizes: Array(repeating: chunkSize, count: 20), maximumLineLength: 8)
            }
            #expect(throws: StreamingLimitError.lineTooLong(limit: 8), "unterminated, chunks of \(chunkSize)") {
                try splitLines(fits + [0x61], chunkSizes: Array(repeating: chunkSize, count: 20), maximumLineLength: 8)
            }
        }
        var splitter = LineSplitter(maximumLineLength: 8)
        #expect(throws: StreamingLimitError.lineTooLong(limit: 8)) { try splitter.split(fits + fits) }
        #expect(throws: StreamingLimitError.lineTooLong(limit: 8)) { try splitter.split(Array("\n".utf8)) }
        #expect(splitter.finish() == nil)
        #expect(try splitter.split(Array("ok\n".utf8)) == ["ok"])
    }

    @Test("an endless line throws as soon as it passes the limit: memory stays bounded")
    func endlessLine() throws {
        var splitter = LineSplitter(maximumLineLength: 1 << 20)
        #expect(splitter.maximumLineLength == LineSplitter.defaultMaximumLineLength)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 16 * 1024)
        var fed = 0
        #expect(throws: StreamingLimitError.lineTooLong(limit: 1 << 20)) {
            while fed < 1 << 30 {
                fed += chunk.count
                _ = try splitter.split(chunk)
            }
        }
        #expect(fed == (1 << 20) + 16 * 1024, "the chunk that passed 1 MiB threw")
    }
}
