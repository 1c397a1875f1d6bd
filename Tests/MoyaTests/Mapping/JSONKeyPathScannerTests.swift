import Foundation
import Testing

@testable import Moya

/// What the scanner finds at `keyPath` in `json`; a found value as its text.
private func lookUp(_ keyPath: String, in json: String) -> String {
    lookUp(keyPath, in: Array(json.utf8))
}

/// What the scanner finds at `keyPath` in `bytes`; a found value as its text.
private func lookUp(_ keyPath: String, in bytes: [UInt8]) -> String {
    let outcome = bytes.withUnsafeBytes { JSONKeyPathScanner.lookUp(JSONKeyPath(keyPath), in: $0) }
    switch outcome {
    case .found(let range, let kind):
        return "\(kind) " + String(decoding: bytes[range], as: UTF8.self)
    case .notFound:
        return "not found"
    case .notADictionary:
        return "not a dictionary"
    case .unsupported:
        return "unsupported"
    }
}

@Suite("JSONKeyPathScanner")
struct JSONKeyPathScannerTests {
    @Test func findsValuesOfEveryKind() {
        let json = #"{"a":{"o":{"x":[1]},"l":[{},[]],"s":"t\"u","n":-1.5e3,"t":true,"f":false,"z":null}}"#
        #expect(lookUp("a.o", in: json) == #"object {"x":[1]}"#)
        #expect(lookUp("a.l", in: json) == "array [{},[]]")
        #expect(lookUp("a.s", in: json) == #"string "t\"u""#)
        #expect(lookUp("a.n", in: json) == "number -1.5e3")
        #expect(lookUp("a.t", in: json) == "boolean true")
        #expect(lookUp("a.f", in: json) == "boolean false")
        #expect(lookUp("a.z", in: json) == "null null")
        #expect(lookUp("a", in: " {\"a\" : [ ] } ") == "array [ ]")
    }

    @Test func leadsNowhere() {
        let json = #"{"a":{"b":1,"n":null,"s":"x"}}"#
        for keyPath in ["b", "a.c", "a.b.c", "a.n.c", "a.s.c", "", "a..b"] {
            #expect(lookUp(keyPath, in: json) == "not found", "\(keyPath)")
        }
        #expect(lookUp("a", in: "{}") == "not found")
        for json in ["[]", #"[{"a":1}]"#, #""a""#, "1", "null", "true", " false "] {
            #expect(lookUp("a", in: json) == "not a dictionary", "\(json)")
        }
    }

    @Test func duplicateKeysOnThePathTheLastOneCounts() {
        #expect(lookUp("a", in: #"{"a":1,"a":2}"#) == "number 2")
        #expect(lookUp("a.b", in: #"{"a":{"b":1},"a":{"c":2}}"#) == "not found")
        #expect(lookUp("a.b", in: #"{"a":{"b":1},"a":5}"#) == "not found")
        #expect(lookUp("a.b", in: #"{"a":[{"b":1}],"a":{"b":2}}"#) == "number 2")
        #expect(lookUp("a.b", in: #"{"a":{"b":2},"a":[{"b":1}]}"#) == "unsupported")
    }

    @Test func keysAreComparedAsSwiftStrings() {
        #expect(lookUp("é", in: #"{"\u00e9":1}"#) == "number 1")
        #expect(lookUp("é", in: "{\"e\u{301}\":1}") == "number 1")
        #expect(lookUp("e\u{301}", in: "{\"é\":1}") == "number 1")
        #expect(lookUp("K", in: "{\"\u{212A}\":1}") == "number 1")
        #expect(lookUp("\u{212A}", in: #"{"K":1}"#) == "number 1")
        #expect(lookUp("🚀", in: #"{"\ud83d\ude80":1}"#) == "number 1")
        #expect(lookUp("a", in: #"{"\u0061":1}"#) == "number 1")
        #expect(lookUp("a/b", in: #"{"a\/b":1}"#) == "number 1")
        #expect(lookUp("k", in: #"{"K":1}"#) == "not found")
    }

    @Test func acceptsWhatJSONSerializationAccepts() {
        #expect(lookUp("a", in: "\u{FEFF}{\"a\":1}") == "number 1")
        #expect(lookUp("a", in: #"{"a":[1,2,],}"#) == "array [1,2,]")
        #expect(lookUp("a", in: #"{"a":"\u0000\u007f"}"#) == #"string "\u0000\u007f""#)
        #expect(lookUp("a", in: "{\"a\":\"\u{7F}\u{10FFFF}\"}") == "string \"\u{7F}\u{10FFFF}\"")
        for number in ["0", "-0.0", "-0e1", "0.5", "-0.5e-5", "1E+250", "12345678901234567890123456789012345678"] {
            #expect(lookUp("a", in: #"{"a":\#(number)}"#) == "number \(number)")
        }
    }

    @Test func leavesToJSONSerializationWhatItRefusesOrChanges() {
        let unsupported = [
            // Not JSON.
            "", " ", "{", #"{"a":1"#, #"{"a":1}}"#, #"{"a":1} x"#, #"{"a" 1}"#, #"{"a":}"#, "{,}", #"{"a":1,,}"#, "[,]", "[1,,]",
            #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":True}"#, #"{a:1}"#, #"{'a':1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#,
            #"{"a":+1}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":1e+}"#, #"{"a":0x1}"#, #"{"a":NaN}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#,
            #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud800\u0041"}"#, "{\"a\":\"\t\"}", "{\"a\":1}\u{0}", "\u{0C}{}",
            // JSONSerialization might refuse or round these numbers.
            #"{"a":1e251}"#, #"{"a":1e-251}"#, #"{"a":-0}"#, #"{"a":[-0]}"#, #"{"a":1e0001}"#, #"{"a":123456789012345678901234567890123456789}"#,
            // Through an array, the path maps over the elements.
            #"{"a":[{"b":1}]}"#,
            // Keys that JSONDecoder and JSONSerialization would resolve differently.
            #"{"a":{"b":1,"b":2}}"#, #"{"a":[{"b":1,"c":0,"b":2}]}"#, "{\"a\":{\"\\u00e9\":1,\"e\u{301}\":2}}",
        ]
        for json in unsupported {
            let keyPath = json.contains(#""b":1}]}"#) ? "a.b" : "a"
            #expect(lookUp(keyPath, in: json) == "unsupported", "\(json.debugDescription)")
        }
        // A byte order mark inside a string, and bytes that are not UTF-8.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(lookUp("a", in: Array(#"{"a":""#.utf8) + bom + Array(#""}"#.utf8)) == "unsupported")
        for bytes: [[UInt8]] in [
            [[0xFF]], [[0xC0, 0x80]], [[0xC2]], [[0xE0, 0x80, 0x80]], [[0xED, 0xA0, 0x80]], [[0xF4, 0x90, 0x80, 0x80]], [[0xF8, 0x80, 0x80, 0x80, 0x80]],
            [[0x80]],
        ] {
            #expect(lookUp("a", in: Array(#"{"a":""#.utf8) + bytes.joined() + Array(#""}"#.utf8)) == "unsupported", "\(bytes)")
        }
    }

    @Test func boundsTheNesting() {
        let depth512 = String(repeating: #"{"a":"#, count: 511) + "[]" + String(repeating: "}", count: 511)
        #expect(lookUp(Array(repeating: "a", count: 511).joined(separator: "."), in: depth512) == "array []")
        let depth513 = String(repeating: #"{"a":"#, count: 512) + "[]" + String(repeating: "}", count: 512)
        #expect(lookUp("a", in: depth513) == "unsupported")
        #expect(lookUp("a", in: String(repeating: "[", count: 1_000_000)) == "unsupported")
    }

    @Test func decodesStrings() {
        func decode(_ contents: String) -> String {
            Array(contents.utf8).withUnsafeBytes { JSONKeyPathScanner.decodeString($0) }
        }
        #expect(decode("plain é 日本 🚀") == "plain é 日本 🚀")
        #expect(decode(#"\"\\\/\b\f\n\r\t"#) == "\"\\/\u{8}\u{C}\n\r\t")
        #expect(decode(#"\u0041\u00e9\u65e5\ud83d\ude80\u0000x"#) == "Aé日🚀\u{0}x")
        #expect(decode("") == "")
    }
}
