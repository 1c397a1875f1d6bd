import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One `Content-Disposition` header, the type it should parse to (`nil`: malformed) and the
/// file name it should give (`nil`: none).
struct DispositionCase: Sendable, CustomTestStringConvertible {
    let header: String
    let type: String?
    let fileName: String?

    /// A header that parses, as `type`, and names `fileName`.
    static func valid(_ header: String, _ fileName: String?, type: String = "attachment") -> DispositionCase {
        DispositionCase(header: header, type: type, fileName: fileName)
    }

    /// A header that does not follow the grammar and is ignored.
    static func invalid(_ header: String) -> DispositionCase {
        DispositionCase(header: header, type: nil, fileName: nil)
    }

    var testDescription: String { header.debugDescription }
}

/// Largely the cases of RFC 6266 and of Julian Reschke's test suite for it (tc2231).
private let dispositionCases: [DispositionCase] = [
    // Types.
    .valid("inline", nil, type: "inline"),
    .valid("inline; filename=\"foo.html\"", "foo.html", type: "inline"),
    .valid("attachment", nil, type: "attachment"),
    .valid("ATTACHMENT", nil, type: "attachment"),
    .valid("foobar", nil, type: "foobar"),
    .valid("foobar; filename=x.bin", "x.bin", type: "foobar"),
    // filename: tokens and quoted strings.
    .valid("attachment; filename=\"foo.html\"", "foo.html"),
    .valid("attachment; filename=foo.html", "foo.html"),
    .valid("Attachment; FILENAME=\"foo.html\"", "foo.html"),
    .valid("attachment; filename =\"foo.html\"", "foo.html"),
    .valid("attachment;filename=\"foo.html\";", "foo.html"),
    .valid("attachment; filename=\"f\\oo.html\"", "foo.html"),
    .valid("attachment; filename=\"\\\"quoting\\\" tested.html\"", "\"quoting\" tested.html"),
    .valid("attachment; filename=\"Here's a semicolon;.html\"", "Here's a semicolon;.html"),
    .valid("attachment; foo=\"bar\"; filename=\"foo.html\"", "foo.html"),
    .valid("attachment; foo=\"\\\"\\\\\";filename=\"foo.html\"", "foo.html"),
    .valid("attachment; filename='foo.bar'", "'foo.bar'"),
    .valid("attachment; filename=\"foo-%41.html\"", "foo-%41.html"),
    .valid("attachment; filename=\"50%.html\"", "50%.html"),
    .valid("attachment; filename=\"=?ISO-8859-1?Q?foo-=E4.html?=\"", "=?ISO-8859-1?Q?foo-=E4.html?="),
    .valid("attachment; filename=\"foo-ä.html\"", "foo-ä.html"),
    .valid("attachment; name=\"foo-%41.html\"", nil, type: "attachment"),
    .valid("attachment; xfilename=foo.html", nil, type: "attachment"),
    .valid("attachment; example=\"filename=example.txt\"", nil, type: "attachment"),
    .valid("attachment; creation-date=\"Wed, 12 Feb 1997 16:29:51 -0500\"", nil, type: "attachment"),
    // filename* (RFC 8187), preferred to filename.
    .valid("attachment; filename*=UTF-8''foo-%c3%a4-%e2%82%ac.html", "foo-ä-€.html"),
    .valid("attachment; filename*=utf-8'en'%E2%82%AC%20rates.pdf", "€ rates.pdf"),
    .valid("attachment; filename*=iso-8859-1''foo-%E4.html", "foo-ä.html"),
    .valid("attachment; filename*= UTF-8''foo-%c3%a4.html", "foo-ä.html"),
    .valid("attachment; filename* =UTF-8''foo-%c3%a4.html", "foo-ä.html"),
    .valid("attachment; filename*=UTF-8''A-%2541.html", "A-%41.html"),
    .valid("attachment; filename=\"foo-ae.html\"; filename*=UTF-8''foo-%c3%a4.html", "foo-ä.html"),
    .valid("attachment; filename*=UTF-8''foo-%c3%a4.html; filename=\"foo-ae.html\"", "foo-ä.html"),
    .valid("inline; FILENAME*=UTF-8''%E6%97%A5%E6%9C%AC.txt; filename=\"fallback.txt\"", "日本.txt", type: "inline"),
    // A bad filename* falls back to filename.
    .valid("attachment; filename*=''foo-%c3%a4.html; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=utf-8''foo-%E4.html; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=\"UTF-8''foo-%c3%a4.html\"; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=UTF-8'foo-%c3%a4.html; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=UTF-8''foo%; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=UTF-8''f%oo.html; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=windows-1252''%80.txt; filename=plain.html", "plain.html"),
    .valid("attachment; filename*=UTF-8''foo%", nil, type: "attachment"),
    // Malformed headers give nothing at all.
    .invalid("\"attachment\""),
    .invalid("filename=foo.html"),
    .invalid("x=y; filename=foo.html"),
    .invalid("; filename=foo.html"),
    .invalid(": inline; attachment; filename=foo.html"),
    .invalid("inline; attachment; filename=foo.html"),
    .invalid("attachment; ;filename=foo"),
    .invalid("attachment; filename=foo bar.html"),
    .invalid("attachment; filename=foo,bar.html"),
    .invalid("attachment; filename=foo[1](2).html"),
    .invalid("attachment; filename=\"foo.html\".txt"),
    .invalid("attachment; filename=\"bar"),
    .invalid("attachment; filename=foo\"bar;baz\"qux"),
    .invalid("attachment; filename=foo.html, attachment; filename=bar.html"),
    .invalid("attachment; filename=\"foo.html\"; filename=\"bar.html\""),
    .invalid("attachment; foo=foo filename=bar"),
    .invalid("attachment filename=bar"),
    .invalid("filename=foo.html; attachment"),
    .invalid("attachment; filename="),
    .invalid("attachment; filename *=UTF-8''foo-%c3%a4.html"),
    .invalid("attachment; filename=\"a\u{1}b\""),
    .invalid(""),
    // Hostile names come back as the server sent them: DownloadFileName cleans them.
    .valid("attachment; filename=\"..\"", ".."),
    .valid("attachment; filename=\"../../etc/passwd\"", "../../etc/passwd"),
    .valid("attachment; filename*=UTF-8''%2Fetc%2Fpasswd", "/etc/passwd"),
    .valid("attachment; filename*=UTF-8''a%00b", "a\u{0}b"),
    .valid("attachment; filename=\"C:\\\\x\\\\y\"", "C:\\x\\y"),
]

/// A name as a server might send it, and what ``DownloadFileName/sanitized(_:)`` makes of it.
private let hostileNames: [(String, String?)] = [
    ("report.pdf", "report.pdf"),
    ("..", nil),
    (".", nil),
    ("", nil),
    ("   ", nil),
    ("/", nil),
    ("\\", nil),
    ("../", nil),
    ("a/..", nil),
    (".\u{0}.", nil),
    ("../../etc/passwd", "passwd"),
    ("/etc/passwd", "passwd"),
    ("..\\..\\windows\\system.ini", "system.ini"),
    ("C:\\x\\y", "y"),
    ("C:\\x\\", "x"),
    ("a\u{0}b", "ab"),
    ("line\r\nbreak.txt", "linebreak.txt"),
    ("tab\there", "tabhere"),
    ("bell\u{7}\u{7F}\u{85}.txt", "bell.txt"),
    ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
    (" spaced name.txt ", "spaced name.txt"),
    (".profile", ".profile"),
    ("...", "..."),
    ("..hidden", "..hidden"),
    ("日本語.txt", "日本語.txt"),
    ("dir/", "dir"),
]

@Suite("Content-Disposition parsing (RFC 6266) and download file names")
struct ContentDispositionTests {
    @Test(arguments: dispositionCases)
    func fileName(_ testCase: DispositionCase) {
        let disposition = ContentDisposition(testCase.header)
        #expect(disposition?.fileName == testCase.fileName)
        #expect(disposition?.type == testCase.type)
    }

    @Test("inline and attachment are told apart")
    func dispositionType() throws {
        #expect(try #require(ContentDisposition("INLINE; filename=a")).isInline)
        #expect(try #require(ContentDisposition("attachment; filename=a")).isInline == false)
    }

    @Test("filename* is decoded from UTF-8 and ISO-8859-1, and nothing else")
    func extendedValues() {
        #expect(ContentDisposition.decodeExtendedValue("UTF-8''%e2%82%ac") == "€")
        #expect(ContentDisposition.decodeExtendedValue("ISO-8859-1'de'%A3%20rates") == "£ rates")
        #expect(ContentDisposition.decodeExtendedValue("utf-8''plain") == "plain")
        #expect(ContentDisposition.decodeExtendedValue("utf-8''") == "")
        #expect(ContentDisposition.decodeExtendedValue("utf-8''%ff") == nil)
        #expect(ContentDisposition.decodeExtendedValue("utf-8''%e2%82") == nil)
        #expect(ContentDisposition.decodeExtendedValue("utf-8''a'b") == nil)
        #expect(ContentDisposition.decodeExtendedValue("utf-8'%41") == nil)
        #expect(ContentDisposition.decodeExtendedValue("koi8-r''%C1") == nil)
        #expect(ContentDisposition.decodeExtendedValue("''abc") == nil)
    }

    @Test(arguments: hostileNames)
    func sanitizedName(_ name: String, expected: String?) {
        #expect(DownloadFileName.sanitized(name) == expected)
    }

    /// Found by the `content-disposition` fuzz target (Fuzz/README.md): the name was split at
    /// `/` as a Swift `Character`, and a combining mark after a separator makes one `Character`
    /// with it, so `../\u{301}evil` was kept whole and named a file outside the directory.
    @Test("A path separator followed by a combining mark still separates (fuzz finding)")
    func separatorBeforeCombiningMark() {
        let directory = URL(fileURLWithPath: "/downloads/here", isDirectory: true)
        for (name, expected) in [
            ("../\u{301}evil", "\u{301}evil"),
            ("..\\\u{301}evil", "\u{301}evil"),
            ("a/\u{301}", "\u{301}"),
            ("file\\\\//\u{301}////", "\u{301}"),
        ] {
            let sanitized = DownloadFileName.sanitized(name)
            #expect(sanitized.map { Array($0.utf8) } == Array(expected.utf8), "\(name.debugDescription) gave \(String(describing: sanitized))")
            #expect(sanitized?.unicodeScalars.contains { $0 == "/" || $0 == "\\" } == false)
            if let sanitized {
                let url = directory.appendingPathComponent(sanitized)
                #expect(url.standardizedFileURL.deletingLastPathComponent().path == directory.path)
            }
        }
    }

    @Test("Names over 255 bytes are cut at a character boundary, keeping the extension")
    func longNames() throws {
        let long = String(repeating: "a", count: 300) + ".pdf"
        let cut = try #require(DownloadFileName.sanitized(long))
        #expect(cut.utf8.count == 255)
        #expect(cut.hasSuffix(".pdf"))
        #expect(cut.hasPrefix("aaaa"))

        // Three bytes per character: never a partial character.
        let wide = String(repeating: "€", count: 100)
        let wideCut = try #require(DownloadFileName.sanitized(wide))
        #expect(wideCut.utf8.count <= 255)
        #expect(wideCut == String(repeating: "€", count: 85))

        // No extension worth keeping: the name is simply cut.
        let noExtension = String(repeating: "b", count: 300)
        #expect(DownloadFileName.sanitized(noExtension) == String(repeating: "b", count: 255))
        let longExtension = "x." + String(repeating: "c", count: 298)
        #expect(DownloadFileName.sanitized(longExtension)?.utf8.count == 255)

        // One character of 301 scalars (a base and combining marks) is cut between scalars.
        let combining = "e" + String(repeating: "\u{301}", count: 300)
        let combiningCut = try #require(DownloadFileName.sanitized(combining))
        #expect(combiningCut.utf8.count <= 255)
        #expect(combiningCut.unicodeScalars.first == "e")

        // A 300-byte name from the header is cut too.
        let header = "attachment; filename*=UTF-8''" + String(repeating: "%C3%A9", count: 150) + ".txt"
        let response = try #require(
            HTTPURLResponse(
                url: URL(string: "https://example.com/x")!, statusCode: 200, httpVersion: nil,
                headerFields: ["Content-Disposition": header]))
        let suggested = DownloadFileName.suggested(for: response)
        #expect(suggested.utf8.count <= 255)
        #expect(suggested.hasSuffix("é.txt"))
    }

    @Test("The name comes from Content-Disposition, else the URL's last path component, else a unique name")
    func nameSources() throws {
        func name(_ url: String, _ disposition: String?) throws -> String {
            let headers = disposition.map { ["Content-Disposition": $0] } ?? [:]
            let response = try #require(HTTPURLResponse(url: URL(string: url)!, statusCode: 200, httpVersion: nil, headerFields: headers))
            return DownloadFileName.suggested(for: response)
        }
        #expect(try name("https://example.com/files/report.pdf", "attachment; filename=\"annual.pdf\"") == "annual.pdf")
        #expect(try name("https://example.com/files/report.pdf", "attachment; filename*=UTF-8''%E2%82%AC.pdf; filename=e.pdf") == "€.pdf")
        #expect(try name("https://example.com/files/report.pdf", "inline") == "report.pdf")
        #expect(try name("https://example.com/files/report.pdf", nil) == "report.pdf")
        #expect(try name("https://example.com/files/annual%20report%E2%82%AC.pdf?x=1#y", nil) == "annual report€.pdf")
        #expect(try name("https://example.com/files/report.pdf/", nil) == "report.pdf")
        // Unusable names in the header fall back to filename, then to the URL.
        #expect(try name("https://example.com/files/report.pdf", "attachment; filename*=UTF-8''..; filename=\"plain.pdf\"") == "plain.pdf")
        #expect(try name("https://example.com/files/report.pdf", "attachment; filename=\"..\"") == "report.pdf")
        #expect(try name("https://example.com/files/report.pdf", "attachment; filename=\"/\"") == "report.pdf")
        #expect(try name("https://example.com/files/report.pdf", "attachment; filename=\"a\"; filename=\"b\"") == "report.pdf")
        // Cleaned, not refused.
        #expect(try name("https://example.com/x", "attachment; filename=\"../../etc/passwd\"") == "passwd")
        #expect(try name("https://example.com/x", "attachment; filename*=UTF-8''a%00b") == "ab")
        // Hostile URL paths.
        #expect(try name("https://example.com/files/%2e%2e", nil).hasPrefix("download-"))
        #expect(try name("https://example.com/files/a%2Fb", nil) == "b")
        #expect(try name("https://example.com/files/%00", nil).hasPrefix("download-"))
        // Nothing usable: a unique name, never "Unknown".
        let first = try name("https://example.com/", nil)
        let second = try name("https://example.com", "attachment; filename=\"..\"")
        #expect(first.hasPrefix("download-"))
        #expect(second.hasPrefix("download-"))
        #expect(first != second)
        #expect(UUID(uuidString: String(first.dropFirst("download-".count))) != nil)
    }

    /// Random headers built from the grammar's pieces and from arbitrary scalars: parsing never
    /// traps, and every name chosen is safe to append to a directory.
    @Test("Fuzzing: whatever the header, the chosen name stays in the directory")
    func fuzz() throws {
        var generator = SplitMix64(seed: 0x6d6f_7961)
        let pieces = [
            "attachment", "inline", ";", " ", "=", "\"", "\\", "'", "%", "%2F", "%2E", "%00", "%C3%A4", "%ff",
            "filename", "filename*", "FILENAME", "UTF-8''", "iso-8859-1''", "..", ".", "/", "a", "b.txt",
            "\u{0}", "\u{7F}", "\u{202E}", "é", "日", ",", "\t",
        ]
        let directory = URL(fileURLWithPath: "/downloads/here", isDirectory: true)
        for _ in 0..<5000 {
            var header = ""
            for _ in 0..<Int.random(in: 0...14, using: &generator) {
                if Int.random(in: 0..<6, using: &generator) == 0 {
                    header.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0...255, using: &generator)))
                } else {
                    header += pieces.randomElement(using: &generator)!
                }
            }
            _ = ContentDisposition(header)
            let response = try #require(
                HTTPURLResponse(
                    url: URL(string: "https://example.com/f")!, statusCode: 200, httpVersion: nil,
                    headerFields: ["Content-Disposition": header]))
            let name = DownloadFileName.suggested(for: response)
            #expect(DownloadFileName.sanitized(name) == name, "\(header.debugDescription) gave \(name.debugDescription)")
            #expect(!name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\\"))
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
            #expect(name.utf8.count <= 255)
            let url = directory.appendingPathComponent(name)
            #expect(
                url.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path,
                "\(header.debugDescription) escaped as \(url.path)")
        }
    }
}
