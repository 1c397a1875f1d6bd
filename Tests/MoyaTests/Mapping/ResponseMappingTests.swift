import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func makeResponse(_ json: String, statusCode: Int = 200) -> Response {
    Response(statusCode: statusCode, data: Data(json.utf8))
}

private struct Repo: Decodable, Equatable {
    let name: String
    let stars: Int
}

private struct OptionalRepo: Decodable, Equatable {
    let name: String?
    let stars: Int?
}

/// Runs `body` and returns the `MoyaError` it throws, recording an issue otherwise.
private func moyaError<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) -> MoyaError? {
    #expect(throws: MoyaError.self, sourceLocation: sourceLocation) { _ = try body() }
}

/// Expects `error` to be `.jsonMapping(response)`.
private func expectJSONMapping(_ error: MoyaError?, _ response: Response, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .jsonMapping(let mapped)? = error else {
        Issue.record("expected .jsonMapping, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(mapped === response, sourceLocation: sourceLocation)
}

/// Expects `error` to be `.stringMapping(response)`.
private func expectStringMapping(_ error: MoyaError?, _ response: Response, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .stringMapping(let mapped)? = error else {
        Issue.record("expected .stringMapping, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(mapped === response, sourceLocation: sourceLocation)
}

/// Expects `error` to be `.objectMapping(DecodingError, response)`.
private func expectObjectMapping(_ error: MoyaError?, _ response: Response, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .objectMapping(let nested, let mapped)? = error else {
        Issue.record("expected .objectMapping, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(nested is DecodingError, "nested error: \(nested)", sourceLocation: sourceLocation)
    #expect(mapped === response, sourceLocation: sourceLocation)
}

// MARK: - mapJSON

@Suite("Response.mapJSON")
struct ResponseMapJSONTests {
    @Test func object() throws {
        let json = try makeResponse(#"{"name":"Moya","stars":42,"tags":["a","b"]}"#).mapJSON()

        let dictionary = try #require(json as? [String: Any])
        #expect(dictionary.count == 3)
        #expect(dictionary["name"] as? String == "Moya")
        #expect(dictionary["stars"] as? Int == 42)
        #expect(dictionary["tags"] as? [String] == ["a", "b"])
    }

    @Test func array() throws {
        let json = try makeResponse("[1, 2, 3]").mapJSON()

        let array = try #require(json as? [Any])
        #expect(array.compactMap { $0 as? Int } == [1, 2, 3])
    }

    @Test func stringFragment() throws {
        #expect(try makeResponse(#""hello""#).mapJSON() as? String == "hello")
    }

    @Test func numberFragment() throws {
        #expect(try makeResponse("42").mapJSON() as? Int == 42)
        #expect(try makeResponse("1.5").mapJSON() as? Double == 1.5)
    }

    @Test func boolFragment() throws {
        let json = try makeResponse("true").mapJSON()

        #expect(json as? Bool == true)
    }

    @Test func nullFragment() throws {
        #expect(try makeResponse("null").mapJSON() is NSNull)
    }

    @Test(arguments: [true, false])
    func invalidJSONThrowsJSONMapping(failsOnEmptyData: Bool) {
        let response = makeResponse("{not json")

        let error = moyaError { try response.mapJSON(failsOnEmptyData: failsOnEmptyData) }

        expectJSONMapping(error, response)
    }

    @Test func emptyDataThrowsByDefault() {
        let response = Response(statusCode: 204, data: Data())

        expectJSONMapping(moyaError { try response.mapJSON() }, response)
        expectJSONMapping(moyaError { try response.mapJSON(failsOnEmptyData: true) }, response)
    }

    @Test func emptyDataGivesNSNullWhenAllowed() throws {
        let json = try Response(statusCode: 204, data: Data()).mapJSON(failsOnEmptyData: false)

        #expect(json is NSNull)
    }

    @Test func whitespaceIsNotEmptyData() {
        let response = makeResponse("  ")

        expectJSONMapping(moyaError { try response.mapJSON(failsOnEmptyData: false) }, response)
    }
}

// MARK: - mapString

@Suite("Response.mapString")
struct ResponseMapStringTests {
    @Test func wholeBody() throws {
        #expect(try makeResponse("plain text, not JSON").mapString() == "plain text, not JSON")
        #expect(try makeResponse("héllo ✓").mapString() == "héllo ✓")
        #expect(try Response(statusCode: 200, data: Data()).mapString() == "")
    }

    @Test func invalidUTF8ThrowsStringMapping() {
        let response = Response(statusCode: 200, data: Data([0xFF, 0xFE, 0xC3]))

        expectStringMapping(moyaError { try response.mapString() }, response)
    }

    @Test func topLevelKeyPath() throws {
        #expect(try makeResponse(#"{"name":"Moya"}"#).mapString(atKeyPath: "name") == "Moya")
    }

    @Test func nestedKeyPath() throws {
        let response = makeResponse(#"{"user":{"address":{"city":"Berlin"}}}"#)

        #expect(try response.mapString(atKeyPath: "user.address.city") == "Berlin")
    }

    @Test func nonJSONWithKeyPathThrowsJSONMapping() {
        let response = makeResponse("plain text")

        expectJSONMapping(moyaError { try response.mapString(atKeyPath: "name") }, response)
    }

    @Test func emptyDataWithKeyPathThrowsJSONMapping() {
        let response = Response(statusCode: 200, data: Data())

        expectJSONMapping(moyaError { try response.mapString(atKeyPath: "name") }, response)
    }

    @Test(arguments: [
        #"{"name":42}"#,
        #"{"name":true}"#,
        #"{"name":null}"#,
        #"{"name":["a"]}"#,
        #"{"name":{"first":"a"}}"#,
        #"{"other":"a"}"#,
        #"["name"]"#,
        #""name""#,
    ])
    func nonStringValueThrowsStringMapping(json: String) {
        let response = makeResponse(json)

        expectStringMapping(moyaError { try response.mapString(atKeyPath: "name") }, response)
    }

    @Test func keyPathThroughArrayIsNotAString() {
        let response = makeResponse(#"{"users":[{"name":"a"},{"name":"b"}]}"#)

        expectStringMapping(moyaError { try response.mapString(atKeyPath: "users.name") }, response)
    }
}

// MARK: - map

@Suite("Response.map")
struct ResponseMapTests {
    @Test func decodesStruct() throws {
        let repo = try makeResponse(#"{"name":"Moya","stars":42}"#).map(Repo.self)

        #expect(repo == Repo(name: "Moya", stars: 42))
    }

    @Test func decodesArray() throws {
        let repos = try makeResponse(#"[{"name":"a","stars":1},{"name":"b","stars":2}]"#).map([Repo].self)

        #expect(repos == [Repo(name: "a", stars: 1), Repo(name: "b", stars: 2)])
    }

    @Test func decodesTopLevelScalarWithoutKeyPath() throws {
        #expect(try makeResponse("7").map(Int.self) == 7)
        #expect(try makeResponse(#""x""#).map(String.self) == "x")
    }

    @Test func decodesObjectAtNestedKeyPath() throws {
        let response = makeResponse(#"{"a":{"b":{"c":{"name":"Moya","stars":3}}},"other":1}"#)

        #expect(try response.map(Repo.self, atKeyPath: "a.b.c") == Repo(name: "Moya", stars: 3))
    }

    @Test func decodesArrayAtKeyPath() throws {
        let response = makeResponse(#"{"data":{"items":[{"name":"a","stars":1},{"name":"b","stars":2}]}}"#)

        let repos = try response.map([Repo].self, atKeyPath: "data.items")

        #expect(repos == [Repo(name: "a", stars: 1), Repo(name: "b", stars: 2)])
    }

    @Test func keyPathThroughArrayMapsOverElements() throws {
        let response = makeResponse(#"{"users":[{"name":"a","age":1},{"name":"b","age":2}]}"#)

        #expect(try response.map([String].self, atKeyPath: "users.name") == ["a", "b"])
        #expect(try response.map([Int].self, atKeyPath: "users.age") == [1, 2])
    }

    @Test func keyPathThroughArrayIntoNestedObjects() throws {
        let response = makeResponse(#"{"users":[{"address":{"city":"A"}},{"address":{"city":"B"}},{"address":{}}]}"#)

        let cities = try response.map([String?].self, atKeyPath: "users.address.city")

        #expect(cities == ["A", "B", nil])
    }

    // MARK: Scalars at key paths

    @Test func intAtKeyPath() throws {
        #expect(try makeResponse(#"{"count":1}"#).map(Int.self, atKeyPath: "count") == 1)
        #expect(try makeResponse(#"{"count":0}"#).map(Int.self, atKeyPath: "count") == 0)
    }

    @Test func boolAtKeyPath() throws {
        #expect(try makeResponse(#"{"flag":true}"#).map(Bool.self, atKeyPath: "flag") == true)
        #expect(try makeResponse(#"{"flag":false}"#).map(Bool.self, atKeyPath: "flag") == false)
    }

    @Test func doubleAtKeyPath() throws {
        #expect(try makeResponse(#"{"ratio":1.5}"#).map(Double.self, atKeyPath: "ratio") == 1.5)
    }

    @Test func stringAtKeyPath() throws {
        #expect(try makeResponse(#"{"a":{"name":"Moya"}}"#).map(String.self, atKeyPath: "a.name") == "Moya")
    }

    @Test func urlAtKeyPath() throws {
        let response = makeResponse(#"{"link":"https://github.com/Moya/Moya"}"#)

        #expect(try response.map(URL.self, atKeyPath: "link") == URL(string: "https://github.com/Moya/Moya"))
    }

    @Test func nullAtKeyPathDecodesAsNilOptional() throws {
        let value = try makeResponse(#"{"name":null}"#).map(String?.self, atKeyPath: "name")

        #expect(value == nil)
    }

    @Test func intDoesNotDecodeAsBool() {
        let response = makeResponse(#"{"count":1}"#)

        expectObjectMapping(moyaError { try response.map(Bool.self, atKeyPath: "count") }, response)
    }

    @Test func boolDoesNotDecodeAsInt() {
        let response = makeResponse(#"{"flag":true}"#)

        expectObjectMapping(moyaError { try response.map(Int.self, atKeyPath: "flag") }, response)
    }

    @Test func numericStringDoesNotDecodeAsInt() {
        let response = makeResponse(#"{"id":"123"}"#)

        expectObjectMapping(moyaError { try response.map(Int.self, atKeyPath: "id") }, response)
    }

    @Test func arrayDoesNotDecodeAsString() {
        let response = makeResponse(#"{"ids":["123","456"]}"#)

        expectObjectMapping(moyaError { try response.map(String.self, atKeyPath: "ids") }, response)
    }

    @Test func stringDoesNotDecodeAsArray() {
        let response = makeResponse(#"{"id":"123"}"#)

        expectObjectMapping(moyaError { try response.map([String].self, atKeyPath: "id") }, response)
    }

    @Test func nullDoesNotDecodeAsString() {
        let response = makeResponse(#"{"name":null}"#)

        expectObjectMapping(moyaError { try response.map(String.self, atKeyPath: "name") }, response)
    }

    // MARK: Missing key paths

    @Test func missingKeyFailsWithJSONMapping() {
        let response = makeResponse(#"{"name":"Moya","stars":1}"#)

        expectJSONMapping(moyaError { try response.map(Repo.self, atKeyPath: "missing") }, response)
        expectJSONMapping(moyaError { try response.map(Repo.self, atKeyPath: "name.missing") }, response)
        expectJSONMapping(moyaError { try response.map(Repo.self, atKeyPath: "missing", failsOnEmptyData: true) }, response)
    }

    @Test func missingKeyFallsBackToWholeBodyWhenNotFailing() throws {
        let response = makeResponse(#"{"name":"Moya","stars":1}"#)

        let repo = try response.map(Repo.self, atKeyPath: "missing", failsOnEmptyData: false)

        #expect(repo == Repo(name: "Moya", stars: 1))
    }

    @Test func missingKeyFallbackStillReportsDecodingErrors() {
        let response = makeResponse(#"{"other":1}"#)

        expectObjectMapping(moyaError { try response.map(Repo.self, atKeyPath: "missing", failsOnEmptyData: false) }, response)
    }

    @Test func keyPathIntoTopLevelArrayFailsWithJSONMapping() {
        let response = makeResponse(#"[{"name":"a","stars":1}]"#)

        expectJSONMapping(moyaError { try response.map([String].self, atKeyPath: "name") }, response)
    }

    @Test func keyPathIntoTopLevelArrayFallsBackToWholeBodyWhenNotFailing() throws {
        let response = makeResponse(#"[{"name":"a","stars":1}]"#)

        let repos = try response.map([Repo].self, atKeyPath: "name", failsOnEmptyData: false)

        #expect(repos == [Repo(name: "a", stars: 1)])
    }

    @Test(arguments: [true, false])
    func invalidJSONWithKeyPathThrowsJSONMapping(failsOnEmptyData: Bool) {
        let response = makeResponse("<html>")

        expectJSONMapping(moyaError { try response.map(Repo.self, atKeyPath: "name", failsOnEmptyData: failsOnEmptyData) }, response)
    }

    @Test func invalidJSONWithoutKeyPathThrowsObjectMapping() {
        let response = makeResponse("<html>")

        expectObjectMapping(moyaError { try response.map(Repo.self) }, response)
    }

    // MARK: Empty data

    @Test func emptyDataDecodesAllOptionalStructWhenNotFailing() throws {
        let repo = try Response(statusCode: 204, data: Data()).map(OptionalRepo.self, failsOnEmptyData: false)

        #expect(repo == OptionalRepo(name: nil, stars: nil))
    }

    @Test func emptyDataDecodesArrayOfAllOptionalStructsAsOneElement() throws {
        let repos = try Response(statusCode: 204, data: Data()).map([OptionalRepo].self, failsOnEmptyData: false)

        #expect(repos == [OptionalRepo(name: nil, stars: nil)])
    }

    @Test func emptyDataWithKeyPathFallsBackWhenNotFailing() throws {
        let repo = try Response(statusCode: 204, data: Data()).map(OptionalRepo.self, atKeyPath: "data.repo", failsOnEmptyData: false)

        #expect(repo == OptionalRepo(name: nil, stars: nil))
    }

    @Test func emptyDataThrowsObjectMappingByDefault() {
        let response = Response(statusCode: 204, data: Data())

        expectObjectMapping(moyaError { try response.map(OptionalRepo.self) }, response)
    }

    @Test func emptyDataWithKeyPathThrowsJSONMappingByDefault() {
        let response = Response(statusCode: 204, data: Data())

        expectJSONMapping(moyaError { try response.map(OptionalRepo.self, atKeyPath: "repo") }, response)
    }

    @Test func emptyDataForNonOptionalTypeThrowsObjectMapping() {
        let response = Response(statusCode: 204, data: Data())

        expectObjectMapping(moyaError { try response.map(Repo.self, failsOnEmptyData: false) }, response)
        expectObjectMapping(moyaError { try response.map(Int.self, failsOnEmptyData: false) }, response)
    }

    // MARK: Decoders and errors

    @Test func customDecoderStrategies() throws {
        struct Event: Decodable, Equatable {
            let eventName: String
            let createdAt: Date
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        let response = makeResponse(#"{"event":{"event_name":"launch","created_at":"2020-01-02T03:04:05Z"}}"#)

        let event = try response.map(Event.self, atKeyPath: "event", using: decoder)
        let date = try response.map(Date.self, atKeyPath: "event.created_at", using: decoder)

        #expect(event == Event(eventName: "launch", createdAt: Date(timeIntervalSince1970: 1_577_934_245)))
        #expect(date == Date(timeIntervalSince1970: 1_577_934_245))
    }

    @Test func defaultDecoderRejectsSnakeCase() {
        struct Event: Decodable {
            let eventName: String
        }
        let response = makeResponse(#"{"event_name":"launch"}"#)

        expectObjectMapping(moyaError { try response.map(Event.self) }, response)
    }

    @Test func typeMismatchWrapsDecodingError() throws {
        let response = makeResponse(#"{"name":"Moya","stars":"many"}"#)

        let error = moyaError { try response.map(Repo.self) }

        expectObjectMapping(error, response)
        guard case .objectMapping(let nested, _)? = error, case .typeMismatch(let type, let context)? = nested as? DecodingError else {
            Issue.record("expected a typeMismatch DecodingError, got \(String(describing: error))")
            return
        }
        #expect(type is Int.Type)
        #expect(context.codingPath.map(\.stringValue) == ["stars"])
        #expect(error?.underlyingError is DecodingError)
        #expect(error?.response === response)
    }

    @Test func missingPropertyWrapsKeyNotFound() {
        let response = makeResponse(#"{"name":"Moya"}"#)

        let error = moyaError { try response.map(Repo.self) }

        guard case .objectMapping(let nested, _)? = error, case .keyNotFound(let key, _)? = nested as? DecodingError else {
            Issue.record("expected a keyNotFound DecodingError, got \(String(describing: error))")
            return
        }
        #expect(key.stringValue == "stars")
    }
}

// MARK: - JSONKeyPath

@Suite("JSONKeyPath")
struct JSONKeyPathTests {
    private let object: [String: Any] = [
        "a": ["b": ["c": 1]],
        "list": [["x": 1], ["x": 2], ["y": 3], "scalar"],
        "nested": [[["x": 1]], [["x": 2]]],
        "name": "Moya",
        "null": NSNull(),
    ]

    @Test func components() {
        #expect(JSONKeyPath("a.b.c").components == ["a", "b", "c"])
        #expect(JSONKeyPath("a").components == ["a"])
        #expect(JSONKeyPath("a..b").components == ["a", "", "b"])
    }

    @Test func walksDictionaries() {
        #expect(JSONKeyPath("a.b.c").value(in: self.object) as? Int == 1)
        #expect((JSONKeyPath("a.b").value(in: self.object) as? [String: Any])?["c"] as? Int == 1)
        #expect(JSONKeyPath("name").value(in: self.object) as? String == "Moya")
        #expect(JSONKeyPath("null").value(in: self.object) is NSNull)
    }

    @Test func missingKeysGiveNil() {
        #expect(JSONKeyPath("missing").value(in: self.object) == nil)
        #expect(JSONKeyPath("a.missing.c").value(in: self.object) == nil)
        #expect(JSONKeyPath("a.b.c.d").value(in: self.object) == nil)
        #expect(JSONKeyPath("name.count").value(in: self.object) == nil)
        #expect(JSONKeyPath("null.x").value(in: self.object) == nil)
        #expect(JSONKeyPath("").value(in: self.object) == nil)
    }

    @Test func mapsOverArraysWithNSNullForMisses() throws {
        let values = try #require(JSONKeyPath("list.x").value(in: self.object) as? [Any])

        #expect(values.count == 4)
        #expect(values[0] as? Int == 1)
        #expect(values[1] as? Int == 2)
        #expect(values[2] is NSNull)
        #expect(values[3] is NSNull)
    }

    @Test func mapsOverNestedArrays() throws {
        let values = try #require(JSONKeyPath("nested.x").value(in: self.object) as? [[Any]])

        #expect(values.map { $0.compactMap { $0 as? Int } } == [[1], [2]])
    }

    @Test func acceptsFoundationCollections() throws {
        let inner = NSDictionary(dictionary: ["c": "deep"])
        let array = NSArray(array: [NSDictionary(dictionary: ["k": "v1"]), NSDictionary(dictionary: ["k": "v2"])])
        let root = NSDictionary(dictionary: ["b": inner, "arr": array])

        #expect(JSONKeyPath("b.c").value(in: root) as? String == "deep")
        #expect(JSONKeyPath("arr.k").value(in: root) as? [String] == ["v1", "v2"])
    }

    @Test func walksJSONSerializationOutput() throws {
        let json = try JSONSerialization.jsonObject(with: Data(#"{"a":[{"b":true},{"b":1}]}"#.utf8))

        let values = try #require(JSONKeyPath("a.b").value(in: json) as? [Any])

        #expect(values.count == 2)
        // JSONSerialization keeps booleans and numbers apart on re-serialization.
        let data = try JSONSerialization.data(withJSONObject: values)
        #expect(String(decoding: data, as: UTF8.self) == "[true,1]")
    }
}
