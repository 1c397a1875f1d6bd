import Foundation
import Testing

@testable import Moya

/// A body from JSON text.
private func body(_ json: String) -> Data {
    Data(json.utf8)
}

/// Nests `inner` in `depth` objects, each under the key `"a"`.
private func nested(_ depth: Int, around inner: String) -> String {
    String(repeating: #"{"a":"#, count: depth) + inner + String(repeating: "}", count: depth)
}

/// The key path `a.a.…` of `depth` components.
private func keyPath(depth: Int) -> String {
    Array(repeating: "a", count: depth).joined(separator: ".")
}

private struct Item: Decodable, Equatable {
    let id: Int
    let name: String
}

/// The semantics of `map(_:atKeyPath:using:failsOnEmptyData:)` and `mapString(atKeyPath:)` on
/// edge cases, each pinned to an expected result and checked against the `JSONSerialization`
/// algorithm the scanner replaced (``MappingOracle``).
@Suite("Key-path mapping: the semantics of the JSONSerialization algorithm, in one pass")
struct KeyPathMappingTests {
    // MARK: Missing keys and null

    @Test func missingKey() {
        let data = body(#"{"data":{"a":1}}"#)
        for keyPath in ["missing", "data.missing", "data.a.b", "data.a.b.c", "", "data."] {
            #expect(
                MappingOracle.expectSameMap(Int.self, data, atKeyPath: keyPath)
                    == .error(#"jsonMapping, same response: true, Optional(Moya.MappingFailure.keyPathNotFound(keyPath: "\#(keyPath)"))"#))
            #expect(
                MappingOracle.expectSameMapString(data, atKeyPath: keyPath)
                    == .error(#"stringMapping, same response: true, Optional(Moya.MappingFailure.keyPathNotFound(keyPath: "\#(keyPath)"))"#))
        }
        // With failsOnEmptyData false, the whole body is decoded instead.
        #expect(
            MappingOracle.expectSameMap([String: AnyJSON].self, data, atKeyPath: "missing", failsOnEmptyData: false)
                == .value(["data": .object(["a": .number(1)])]))
    }

    @Test func topLevelIsNotAnObject() {
        for json in [#"[{"a":1}]"#, #""a""#, "1", "null", "true"] {
            MappingOracle.expectSameMap(Int.self, body(json), atKeyPath: "a")
            MappingOracle.expectSameMap(AnyJSON.self, body(json), atKeyPath: "a", failsOnEmptyData: false)
            #expect(
                MappingOracle.expectSameMapString(body(json), atKeyPath: "a")
                    == .error(#"stringMapping, same response: true, Optional(Moya.MappingFailure.notADictionary(keyPath: "a"))"#))
        }
    }

    @Test func nullAtTheKeyPath() {
        let data = body(#"{"data":{"name":null}}"#)
        #expect(MappingOracle.expectSameMap(String?.self, data, atKeyPath: "data.name") == .value(nil))
        #expect(MappingOracle.expectSameMap(AnyJSON.self, data, atKeyPath: "data.name") == .value(.null))
        guard case .error(let message) = MappingOracle.expectSameMap(String.self, data, atKeyPath: "data.name") else {
            Issue.record("null decoded as String")
            return
        }
        #expect(message.hasPrefix("objectMapping"))
        MappingOracle.expectSameMapString(data, atKeyPath: "data.name")
        // Through null, the key path leads nowhere.
        MappingOracle.expectSameMap(Int.self, data, atKeyPath: "data.name.first")
    }

    // MARK: Values of every kind

    @Test func scalarsAtTheKeyPath() {
        let data = body(
            #"{"v":{"int":-42,"big":18446744073709551615,"double":2.5e-3,"true":true,"false":false,"string":"s","one":1,"date":"2020-01-02T03:04:05Z"}}"#)
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "v.int") == .value(-42))
        #expect(MappingOracle.expectSameMap(UInt64.self, data, atKeyPath: "v.big") == .value(UInt64.max))
        #expect(MappingOracle.expectSameMap(Double.self, data, atKeyPath: "v.double") == .value(0.0025))
        #expect(MappingOracle.expectSameMap(Decimal.self, data, atKeyPath: "v.double") == .value(Decimal(sign: .plus, exponent: -4, significand: 25)))
        #expect(MappingOracle.expectSameMap(Bool.self, data, atKeyPath: "v.true") == .value(true))
        #expect(MappingOracle.expectSameMap(Bool.self, data, atKeyPath: "v.false") == .value(false))
        #expect(MappingOracle.expectSameMap(String.self, data, atKeyPath: "v.string") == .value("s"))
        #expect(MappingOracle.expectSameMapString(data, atKeyPath: "v.string") == .value("s"))
        // Numbers and booleans stay apart, as do numbers and strings.
        for (type, keyPath) in [(Bool.self as any (Decodable & Equatable).Type, "v.one"), (Int.self, "v.true"), (Int.self, "v.string"), (String.self, "v.int")]
        {
            guard case .error(let message) = Self.expectSameMap(type, data, atKeyPath: keyPath) else {
                Issue.record("\(keyPath) decoded as \(type)")
                continue
            }
            #expect(message.hasPrefix("objectMapping"))
        }
        for keyPath in ["v.int", "v.true", "v.one", "v"] {
            MappingOracle.expectSameMapString(data, atKeyPath: keyPath)
        }
    }

    @Test func numbersInEveryForm() {
        let numbers = [
            "0", "-0", "7.0", "1e3", "1E+2", "-2.5e-3", "0.1", "9223372036854775807", "-9223372036854775808",
            "18446744073709551616", "123456789.123456789", "1e250", "1e251", "1e-300", "1e400",
            "1\(String(repeating: "0", count: 40))", "01", "1.", "-", ".5", "+1",
        ]
        for number in numbers {
            let data = body(#"{"n":\#(number),"list":[\#(number)]}"#)
            MappingOracle.expectSameMap(Int.self, data, atKeyPath: "n")
            MappingOracle.expectSameMap(Double.self, data, atKeyPath: "n")
            MappingOracle.expectSameMap(Decimal.self, data, atKeyPath: "n")
            MappingOracle.expectSameMap([Double].self, data, atKeyPath: "list")
            MappingOracle.expectSameMap([Int].self, data, atKeyPath: "list")
        }
        // JSONSerialization reads `-0` as the integer 0, and `-0.0` as a negative zero.
        for (number, sign) in [("-0", FloatingPointSign.plus), ("-0.0", .minus), ("-0e1", .minus)] {
            for keyPath in ["n", "list"] {
                let result = MappingOracle.expectSameMap(AnyJSON.self, body(#"{"n":\#(number),"list":[\#(number)]}"#), atKeyPath: keyPath)
                #expect(result == .value(keyPath == "n" ? .number(0) : .array([.number(0)])))
                if case .value(.number(let zero)) = result {
                    #expect(zero.sign == sign, "\(number)")
                }
                if case .value(.array(let list)) = result, case .number(let zero)? = list.first {
                    #expect(zero.sign == sign, "\(number) in an array")
                }
            }
        }
    }

    @Test func objectsAndArraysAtTheKeyPath() {
        let data = body(#"{"data":{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"matrix":[[1,2],[],[3]],"empty":{}}}"#)
        #expect(MappingOracle.expectSameMap([Item].self, data, atKeyPath: "data.items") == .value([Item(id: 1, name: "a"), Item(id: 2, name: "b")]))
        #expect(MappingOracle.expectSameMap([[Int]].self, data, atKeyPath: "data.matrix") == .value([[1, 2], [], [3]]))
        #expect(MappingOracle.expectSameMap([String: Int].self, data, atKeyPath: "data.empty") == .value([:]))
        MappingOracle.expectSameMap(Item.self, data, atKeyPath: "data.items")
        MappingOracle.expectSameMap([Item].self, data, atKeyPath: "data.empty")
    }

    @Test func keyPathsThroughArrays() {
        let data = body(#"{"users":[{"name":"a","tags":[{"k":1}]},{"name":"b"},{"other":1},"scalar",[{"name":"c"}]]}"#)
        MappingOracle.expectSameMap([AnyJSON].self, data, atKeyPath: "users.name")
        MappingOracle.expectSameMap([AnyJSON].self, data, atKeyPath: "users.tags.k")
        MappingOracle.expectSameMap([String?].self, data, atKeyPath: "users.name")
        MappingOracle.expectSameMapString(data, atKeyPath: "users.name")
        #expect(MappingOracle.expectSameMap([String].self, body(#"{"u":[{"n":"a"},{"n":"b"}]}"#), atKeyPath: "u.n") == .value(["a", "b"]))
    }

    // MARK: Keys

    @Test func keysBeyondASCIIAndWithEscapes() {
        // "é" precomposed (U+00E9) in the body, decomposed ("e" and U+0301) in the key path, and
        // the other way round; escaped; beyond the BMP through a surrogate pair; the Kelvin sign,
        // which is canonically equivalent to "K".
        let data = body(#"{"caf\u00e9":{"日本":{"🚀":1,"\ud83d\ude80x":2}},"cafe\#u{301}s":3,"\u212A":4,"quote\"d":5,"sl\/ash":6,"tab\t":7}"#)
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "café.日本.🚀") == .value(1))
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "cafe\u{301}.日本.🚀x") == .value(2))
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "cafés") == .value(3))
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "K") == .value(4))
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "quote\"d") == .value(5))
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "sl/ash") == .value(6))
        #expect(MappingOracle.expectSameMap(Int.self, data, atKeyPath: "tab\t") == .value(7))
        MappingOracle.expectSameMap(Int.self, data, atKeyPath: "cafe")
        MappingOracle.expectSameMap(Int.self, data, atKeyPath: "k")
    }

    @Test func duplicateKeysTheLastOneCounts() {
        // On the key path: the last "data" counts, even when an earlier one held the rest of the
        // path, or was an array.
        #expect(MappingOracle.expectSameMap(Int.self, body(#"{"data":{"a":1},"data":{"a":2}}"#), atKeyPath: "data.a") == .value(2))
        MappingOracle.expectSameMap(Int.self, body(#"{"data":{"a":1},"data":{"b":2}}"#), atKeyPath: "data.a")
        #expect(MappingOracle.expectSameMap(Int.self, body(#"{"data":[{"a":1}],"data":{"a":2}}"#), atKeyPath: "data.a") == .value(2))
        MappingOracle.expectSameMap([Int].self, body(#"{"data":{"a":1},"data":[{"a":2}]}"#), atKeyPath: "data.a")
        // Canonically equivalent keys are the same key.
        #expect(MappingOracle.expectSameMap(Int.self, body("{\"caf\\u00e9\":1,\"cafe\u{301}\":2}"), atKeyPath: "café") == .value(2))
        // Inside the value: JSONSerialization keeps the last, where JSONDecoder would keep the first.
        #expect(MappingOracle.expectSameMap([String: Int].self, body(#"{"data":{"a":1,"b":0,"a":2}}"#), atKeyPath: "data") == .value(["a": 2, "b": 0]))
        #expect(MappingOracle.expectSameMap([[String: Int]].self, body(#"{"data":[{"a":1,"a":2}]}"#), atKeyPath: "data") == .value([["a": 2]]))
        #expect(MappingOracle.expectSameMap([String: Int].self, body("{\"data\":{\"\\u212a\":1,\"K\":2}}"), atKeyPath: "data") == .value(["K": 2]))
        // Many keys (the duplicate check sorts them).
        let members = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        MappingOracle.expectSameMap([String: Int].self, body(#"{"data":{\#(members),"k7":-1}}"#), atKeyPath: "data")
        #expect(
            MappingOracle.expectSameMap([String: Int].self, body(#"{"data":{\#(members)}}"#), atKeyPath: "data")
                == .value(Dictionary(uniqueKeysWithValues: (0..<40).map { ("k\($0)", $0) })))
    }

    // MARK: Whitespace, nesting, empty and malformed bodies

    @Test func whitespaceEverywhere() {
        let data = body(" \r\n\t{ \"data\" :\n{\t\"items\"\r: [ { \"id\" : 1 , \"name\" : \"a\" } , ] , } } \n")
        #expect(MappingOracle.expectSameMap([Item].self, data, atKeyPath: "data.items") == .value([Item(id: 1, name: "a")]))
        #expect(MappingOracle.expectSameMapString(body(#" { "s" : "x" } "#), atKeyPath: "s") == .value("x"))
    }

    @Test func deepNesting() async {
        // JSONSerialization accepts 512 nested arrays and objects, and refuses 513.
        #expect(MappingOracle.expectSameMap(Int.self, body(nested(511, around: "1")), atKeyPath: keyPath(depth: 511)) == .value(1))
        #expect(MappingOracle.expectSameMap([Int].self, body(nested(511, around: "[1]")), atKeyPath: keyPath(depth: 511)) == .value([1]))
        let deepValue = MappingOracle.expectSameMap(AnyJSON.self, body(nested(512, around: "1")), atKeyPath: "a.a")
        #expect({ if case .value = deepValue { true } else { false } }())
        guard case .error(let message) = MappingOracle.expectSameMap(Int.self, body(nested(513, around: "1")), atKeyPath: "a") else {
            Issue.record("513 levels were accepted")
            return
        }
        #expect(message.contains("Too many nested arrays or dictionaries"))
        // Hostile depths end in the same error, without exhausting the stack: 40,000 levels would
        // overflow a task thread's stack many times over in a parser that recursed per level.
        await _Concurrency.Task.yield()
        MappingOracle.expectSameMap(Int.self, body(String(repeating: "[", count: 40_000)), atKeyPath: "a")
        await _Concurrency.Task.yield()
        MappingOracle.expectSameMap(Int.self, body(nested(40_000, around: "1")), atKeyPath: keyPath(depth: 3))
        await _Concurrency.Task.yield()
        MappingOracle.expectSameMapString(body(nested(40_000, around: "1")), atKeyPath: "a")
    }

    @Test(arguments: [true, false])
    func emptyBody(failsOnEmptyData: Bool) {
        let result = MappingOracle.expectSameMap([String: Int].self, Data(), atKeyPath: "data", failsOnEmptyData: failsOnEmptyData)
        #expect(result == (failsOnEmptyData ? .error("jsonMapping, same response: true, Optional(Moya.MappingFailure.emptyBody)") : .value([:])))
        MappingOracle.expectSameMap([Item].self, Data(), atKeyPath: "data", failsOnEmptyData: failsOnEmptyData)
        MappingOracle.expectSameMap(Int.self, Data(), atKeyPath: "data", failsOnEmptyData: failsOnEmptyData)
        MappingOracle.expectSameMapString(Data(), atKeyPath: "data")
    }

    @Test(arguments: [
        #"{"data":{"a":1}"#, #"{"data":"#, #"{"data":{"a":1}} x"#, #"{"data":{"a":1}}}"#, #"{"data":{"a":1,,}}"#, #"{"data":[1,]]}"#,
        #"{"data":"\ud800"}"#, #"{"data":"\x"}"#, #"{"data":tru}"#, #"{"data":1}{}"#, "{\"data\":\"a\u{1}\"}", #"{,}"#, "<html>",
    ])
    func malformedBody(json: String) {
        for failsOnEmptyData in [true, false] {
            guard case .error(let message) = MappingOracle.expectSameMap(AnyJSON.self, body(json), atKeyPath: "data", failsOnEmptyData: failsOnEmptyData) else {
                Issue.record("\(json) was accepted")
                continue
            }
            #expect(message.contains("invalidJSON"))
        }
        MappingOracle.expectSameMapString(body(json), atKeyPath: "data")
    }

    @Test func bytesThatAreNotUTF8() {
        for bytes: [UInt8] in [
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], [0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D],
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D], [0x7B, 0x7D, 0x00],
            Array(#"{"a":1}"#.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
        ] {
            MappingOracle.expectSameMap(AnyJSON.self, Data(bytes), atKeyPath: "a")
            MappingOracle.expectSameMapString(Data(bytes), atKeyPath: "a")
        }
    }

    @Test func byteOrderMarks() {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        // At the start of the body, JSONSerialization skips it.
        #expect(MappingOracle.expectSameMap(Int.self, Data(bom + Array(#"{"a":1}"#.utf8)), atKeyPath: "a") == .value(1))
        // At the start of a string, or after an escape sequence, JSONSerialization drops it.
        let inString = Data(Array(#"{"a":""#.utf8) + bom + Array(#"x\n"#.utf8) + bom + Array(#"y"}"#.utf8))
        MappingOracle.expectSameMapString(inString, atKeyPath: "a")
        MappingOracle.expectSameMap(String.self, inString, atKeyPath: "a")
        let inKey = Data(Array(#"{""#.utf8) + bom + Array(#"a":1}"#.utf8))
        MappingOracle.expectSameMap(Int.self, inKey, atKeyPath: "a")
        #expect(MappingOracle.expectSameMapString(body(#"{"a":"\ufeffx"}"#), atKeyPath: "a") == .value("\u{FEFF}x"))
    }

    // MARK: Strings

    @Test func stringsWithEscapes() {
        let data = body(#"{"s":"a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\ud83d\ude80\u2028 é 日本 🚀","plain":"no escapes","empty":""}"#)
        let expected = "a\"b\\c/d\u{8}\u{C}\n\r\t\u{0}é🚀\u{2028} é 日本 🚀"
        #expect(MappingOracle.expectSameMapString(data, atKeyPath: "s") == .value(expected))
        #expect(MappingOracle.expectSameMap(String.self, data, atKeyPath: "s") == .value(expected))
        #expect(MappingOracle.expectSameMapString(data, atKeyPath: "plain") == .value("no escapes"))
        #expect(MappingOracle.expectSameMapString(data, atKeyPath: "empty") == .value(""))
        let long = String(repeating: "0123456789abcdef", count: 10_000)
        #expect(MappingOracle.expectSameMapString(body(#"{"blob":"\#(long)"}"#), atKeyPath: "blob") == .value(long))
    }

    // MARK: Decoders

    @Test func customDecoderStrategies() {
        struct Event: Decodable, Equatable {
            let eventName: String
            let createdAt: Date
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        let data = body(
            #"{"data":{"event":{"event_name":"launch","created_at":"2020-01-02T03:04:05Z"},"events":[{"event_name":"a","created_at":"2020-01-02T03:04:05Z"}]}}"#
        )
        let date = Date(timeIntervalSince1970: 1_577_934_245)
        #expect(MappingOracle.expectSameMap(Event.self, data, atKeyPath: "data.event", using: decoder) == .value(Event(eventName: "launch", createdAt: date)))
        #expect(MappingOracle.expectSameMap([Event].self, data, atKeyPath: "data.events", using: decoder) == .value([Event(eventName: "a", createdAt: date)]))
        #expect(MappingOracle.expectSameMap(Date.self, data, atKeyPath: "data.event.created_at", using: decoder) == .value(date))
        // The key path names the keys as they are in the body, not as the strategy converts them.
        MappingOracle.expectSameMap(Date.self, data, atKeyPath: "data.event.createdAt", using: decoder)
        // The default decoder does not convert.
        MappingOracle.expectSameMap(Event.self, data, atKeyPath: "data.event")

        let seconds = JSONDecoder()
        seconds.dateDecodingStrategy = .secondsSince1970
        #expect(MappingOracle.expectSameMap(Date.self, body(#"{"t":1577934245}"#), atKeyPath: "t", using: seconds) == .value(date))

        // A custom key strategy sees the wrapper's key when a scalar is decoded, as before.
        let upper = JSONDecoder()
        upper.keyDecodingStrategy = .custom { path in
            AnyKey(stringValue: path.last.map { $0.stringValue.uppercased() } ?? "")
        }
        MappingOracle.expectSameMap(Int.self, body(#"{"n":1}"#), atKeyPath: "n", using: upper)
        MappingOracle.expectSameMap([String: Int].self, body(#"{"d":{"k":1}}"#), atKeyPath: "d", using: upper)
    }

    @Test func decodingErrorsNameTheFullPath() {
        let data = body(#"{"data":{"items":[{"id":1,"name":"a"},{"id":"two","name":"b"}]}}"#)
        guard case .error(let message) = MappingOracle.expectSameMap([Item].self, data, atKeyPath: "data.items") else {
            Issue.record("a string decoded as Int")
            return
        }
        #expect(message.contains("typeMismatch"))
        let response = Response(statusCode: 200, data: data)
        #expect(throws: MoyaError.self) { try response.map([Item].self, atKeyPath: "data.items") }
        do {
            _ = try response.map([Item].self, atKeyPath: "data.items")
        } catch MoyaError.objectMapping(let error as DecodingError, _) {
            guard case .typeMismatch(_, let context) = error else {
                Issue.record("expected a typeMismatch, got \(error)")
                return
            }
            #expect(DecodingError.describe(context.codingPath) == #""data.items[1].id""#)
        } catch {
            Issue.record("expected objectMapping, got \(error)")
        }
    }

    // MARK: Bodies

    @Test func bigDocument() async throws {
        let items = (0..<5_000).map { #"{"id":\#($0),"name":"item \#($0) é","tags":["a","b"],"score":\#(Double($0) / 8)}"# }
        let data = body(#"{"meta":{"count":5000},"data":[\#(items.joined(separator: ","))],"after":{"name":"end"}}"#)
        let mapped = try Response(statusCode: 200, data: data).map([Item].self, atKeyPath: "data")
        #expect(mapped.count == 5_000)
        #expect(mapped.last == Item(id: 4_999, name: "item 4999 é"))
        await _Concurrency.Task.yield()
        MappingOracle.expectSameMap([Item].self, data, atKeyPath: "data")
        #expect(MappingOracle.expectSameMapString(data, atKeyPath: "after.name") == .value("end"))
    }

    @Test func bodyThatIsASliceOfLargerData() throws {
        let whole = Data(#"xx{"data":{"id":1,"name":"a"},"s":"t"}yy"#.utf8)
        let slice = whole[whole.index(whole.startIndex, offsetBy: 2)..<whole.index(whole.endIndex, offsetBy: -2)]
        let response = Response(statusCode: 200, data: slice)
        #expect(try response.map(Item.self, atKeyPath: "data") == Item(id: 1, name: "a"))
        #expect(try response.mapString(atKeyPath: "s") == "t")
        #expect(try response.map(Int.self, atKeyPath: "data.id") == 1)
    }

    /// ``MappingOracle/expectSameMap(_:_:atKeyPath:using:failsOnEmptyData:sourceLocation:)`` for a
    /// type only known at run time; the value is dropped.
    private static func expectSameMap(
        _ type: any (Decodable & Equatable).Type, _ data: Data, atKeyPath keyPath: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> MappingResult<Bool> {
        func open<T: Decodable & Equatable>(_ type: T.Type) -> MappingResult<Bool> {
            switch MappingOracle.expectSameMap(type, data, atKeyPath: keyPath, sourceLocation: sourceLocation) {
            case .value: return .value(true)
            case .error(let message): return .error(message)
            }
        }
        return open(type)
    }
}

/// A coding key made of any string.
private struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        return nil
    }
}
