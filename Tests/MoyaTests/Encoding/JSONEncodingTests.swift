import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds a request for the JSON encoding tests.
private func makeRequest(_ method: Moya.Method = .post, url: String = "https://example.com/path?x=1") -> URLRequest {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method.rawValue
    return request
}

/// The body of `request` as UTF-8 text, or `nil` when it has no body.
private func bodyText(_ request: URLRequest) -> String? {
    request.httpBody.map { String(decoding: $0, as: UTF8.self) }
}

/// A value `JSONSerialization` can't write, named so that parameterized tests can list it.
enum InvalidJSONValue: String, CaseIterable, Sendable {
    case date, customStruct, customClass, nan, infinity, floatNaN, data, url, set, nestedDate, dateInArray

    private struct Custom {}
    private final class CustomClass {}

    /// The invalid value itself.
    var value: Any {
        switch self {
        case .date: return Date(timeIntervalSince1970: 0)
        case .customStruct: return Custom()
        case .customClass: return CustomClass()
        case .nan: return Double.nan
        case .infinity: return Double.infinity
        case .floatNaN: return Float.nan
        case .data: return Data([1, 2])
        case .url: return URL(string: "https://example.com")!
        case .set: return Set([1, 2])
        case .nestedDate: return ["inner": ["when": Date()]]
        case .dateInArray: return [1, Date()]
        }
    }
}

@Suite("JSONEncoding")
struct JSONEncodingTests {
    @Test("Static encodings and options")
    func staticEncodings() {
        #expect(JSONEncoding.default.options == [])
        #expect(JSONEncoding().options == [])
        #expect(JSONEncoding.prettyPrinted.options == .prettyPrinted)
        #expect(JSONEncoding(options: [.sortedKeys, .prettyPrinted]).options == [.sortedKeys, .prettyPrinted])
    }

    @Test("Nil parameters or object leave the request unchanged")
    func nilParameters() throws {
        let request = makeRequest()
        for encoded in [
            try JSONEncoding.default.encode(request, with: nil),
            try JSONEncoding.default.encode(request, withJSONObject: nil),
            try JSONEncoding.default.encode(request),
        ] {
            #expect(encoded.url?.absoluteString == "https://example.com/path?x=1")
            #expect(encoded.httpBody == nil)
            #expect(encoded.value(forHTTPHeaderField: "Content-Type") == nil)
        }
    }

    @Test("Empty parameters give {}")
    func emptyParameters() throws {
        let encoded = try JSONEncoding.default.encode(makeRequest(), with: [:])
        #expect(bodyText(encoded) == "{}")
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test("Parameters become the JSON body, in the body for any method", arguments: [Moya.Method.get, .post, .put])
    func dictionaryBody(method: Moya.Method) throws {
        let encoded = try JSONEncoding.default.encode(makeRequest(method), with: ["foo": "bar"])
        #expect(bodyText(encoded) == #"{"foo":"bar"}"#)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(encoded.url?.absoluteString == "https://example.com/path?x=1")
        #expect(encoded.httpMethod == method.rawValue)
    }

    @Test("Values keep their JSON types")
    func valueTypes() throws {
        let parameters: Parameters = [
            "array": [1, "two", ["three": 3]],
            "bool": true,
            "double": 1.5,
            "int": 1,
            "nested": ["inner": ["x": false]],
            "nsBool": NSNumber(value: false),
            "nsInt": NSNumber(value: 0),
            "null": NSNull(),
            "string": "text",
        ]
        let encoded = try JSONEncoding(options: .sortedKeys).encode(makeRequest(), with: parameters)
        #expect(
            bodyText(encoded) == #"{"array":[1,"two",{"three":3}],"bool":true,"double":1.5,"int":1,"#
                + #""nested":{"inner":{"x":false}},"nsBool":false,"nsInt":0,"null":null,"string":"text"}"#)
    }

    @Test("Unicode, quotes and control characters survive a round trip")
    func unicodeRoundTrip() throws {
        let text = "Grüße 😀 🇫🇷 中文 \"quoted\" back\\slash a/b\nline\ttab"
        let encoded = try JSONEncoding.default.encode(makeRequest(), with: ["text": text])
        let body = try #require(encoded.httpBody)
        let decoded = try #require(try JSONSerialization.jsonObject(with: body) as? [String: String])
        #expect(decoded == ["text": text])
        #expect(bodyText(encoded)?.contains("😀") == true)
    }

    @Test("Pretty printing")
    func prettyPrinted() throws {
        let single = try JSONEncoding.prettyPrinted.encode(makeRequest(), with: ["a": ["b": [1, 2.5, true]]])
        #expect(bodyText(single) == "{\n  \"a\" : {\n    \"b\" : [\n      1,\n      2.5,\n      true\n    ]\n  }\n}")

        let sorted = try JSONEncoding(options: [.prettyPrinted, .sortedKeys]).encode(makeRequest(), with: ["b": 2, "a": [1]])
        #expect(bodyText(sorted) == "{\n  \"a\" : [\n    1\n  ],\n  \"b\" : 2\n}")
    }

    @Test(
        "An array can be encoded with withJSONObject",
        arguments: [
            JSONEncoding.default, JSONEncoding(options: .sortedKeys),
        ])
    func arrayObject(encoding: JSONEncoding) throws {
        let encoded = try encoding.encode(makeRequest(), withJSONObject: [1, "two", ["three": 3], [true, NSNull()]])
        #expect(bodyText(encoded) == #"[1,"two",{"three":3},[true,null]]"#)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/json")

        let empty = try encoding.encode(makeRequest(), withJSONObject: [Any]())
        #expect(bodyText(empty) == "[]")
    }

    @Test("The body replaces an existing body and other headers are kept")
    func bodyReplaced() throws {
        var request = makeRequest()
        request.httpBody = Data("old".utf8)
        request.setValue("token", forHTTPHeaderField: "Authorization")
        let encoded = try JSONEncoding.default.encode(request, with: ["a": 1])
        #expect(bodyText(encoded) == #"{"a":1}"#)
        #expect(encoded.value(forHTTPHeaderField: "Authorization") == "token")
    }

    @Test(
        "An existing Content-Type is kept, whatever its case",
        arguments: [
            "Content-Type", "content-type", "CoNtEnT-TyPe",
        ])
    func existingContentTypeKept(headerName: String) throws {
        var request = makeRequest()
        request.setValue("application/vnd.api+json", forHTTPHeaderField: headerName)
        for encoded in [
            try JSONEncoding.default.encode(request, with: ["a": 1]),
            try JSONEncoding.default.encode(request, withJSONObject: [1]),
        ] {
            #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
            let contentTypeFields = (encoded.allHTTPHeaderFields ?? [:]).keys.filter { $0.lowercased() == "content-type" }
            #expect(contentTypeFields.count == 1)
        }
    }

    @Test("Invalid JSON objects throw invalidJSONObject instead of crashing", arguments: InvalidJSONValue.allCases)
    func invalidObjects(invalid: InvalidJSONValue) throws {
        let request = makeRequest()
        let fromParameters = #expect(throws: ParameterEncodingError.self) {
            try JSONEncoding.default.encode(request, with: ["key": invalid.value])
        }
        guard case .invalidJSONObject = fromParameters else {
            Issue.record("expected .invalidJSONObject, got \(String(describing: fromParameters))")
            return
        }

        let fromArray = #expect(throws: ParameterEncodingError.self) {
            try JSONEncoding.prettyPrinted.encode(request, withJSONObject: [invalid.value])
        }
        guard case .invalidJSONObject = fromArray else {
            Issue.record("expected .invalidJSONObject, got \(String(describing: fromArray))")
            return
        }
    }

    @Test("Top-level fragments need .fragmentsAllowed")
    func fragments() throws {
        let request = makeRequest()
        for fragment: Any in ["text", 42, NSNull()] {
            let error = #expect(throws: ParameterEncodingError.self) {
                try JSONEncoding.default.encode(request, withJSONObject: fragment)
            }
            guard case .invalidJSONObject = error else {
                Issue.record("expected .invalidJSONObject, got \(String(describing: error))")
                continue
            }
        }

        let allowed = JSONEncoding(options: .fragmentsAllowed)
        #expect(bodyText(try allowed.encode(request, withJSONObject: "text")) == #""text""#)
        #expect(bodyText(try allowed.encode(request, withJSONObject: 42)) == "42")
        #expect(bodyText(try allowed.encode(request, withJSONObject: NSNull())) == "null")
        #expect(throws: ParameterEncodingError.self) {
            try allowed.encode(request, withJSONObject: Double.nan)
        }
        #expect(throws: ParameterEncodingError.self) {
            try allowed.encode(request, withJSONObject: Date())
        }
    }

    @Test("A request without a URL throws missingURL")
    func missingURL() throws {
        var request = makeRequest()
        request.url = nil
        let error = #expect(throws: ParameterEncodingError.self) {
            try JSONEncoding.default.encode(request, with: ["a": 1])
        }
        guard case .missingURL = error else {
            Issue.record("expected .missingURL, got \(String(describing: error))")
            return
        }
        #expect(try JSONEncoding.default.encode(request, with: nil).url == nil)
    }

    @Test("Errors from the request source are passed through")
    func failingRequestSource() {
        struct Failure: Error, Equatable {}
        struct FailingRequest: URLRequestConvertible {
            func asURLRequest() throws -> URLRequest { throw Failure() }
        }
        #expect(throws: Failure()) {
            try JSONEncoding.default.encode(FailingRequest(), with: ["a": 1])
        }
        #expect(throws: Failure()) {
            try JSONEncoding.default.encode(FailingRequest(), withJSONObject: [1])
        }
    }
}

@Suite("ParameterEncodingError")
struct ParameterEncodingErrorTests {
    private struct Underlying: LocalizedError {
        var errorDescription: String? { "the underlying failure" }
    }

    @Test("Descriptions")
    func descriptions() {
        #expect(ParameterEncodingError.missingURL.errorDescription == "URL request to encode was missing a URL.")
        #expect(
            ParameterEncodingError.invalidJSONObject.errorDescription
                == "JSON could not be encoded because the parameters are not a valid JSON object.")
        #expect(
            ParameterEncodingError.jsonEncodingFailed(Underlying()).errorDescription
                == "JSON could not be encoded because of error:\nthe underlying failure")
        #expect(
            ParameterEncodingError.propertyListEncodingFailed(Underlying()).errorDescription
                == "PropertyList could not be encoded because of error:\nthe underlying failure")
        #expect(ParameterEncodingError.invalidJSONObject.description == ParameterEncodingError.invalidJSONObject.errorDescription)
        #expect(ParameterEncodingError.missingURL.localizedDescription == "URL request to encode was missing a URL.")
    }

    @Test("The underlying error is exposed")
    func underlyingError() {
        #expect(ParameterEncodingError.missingURL.underlyingError == nil)
        #expect(ParameterEncodingError.invalidJSONObject.underlyingError == nil)
        #expect(ParameterEncodingError.jsonEncodingFailed(Underlying()).underlyingError is Underlying)
        #expect(ParameterEncodingError.propertyListEncodingFailed(Underlying()).underlyingError is Underlying)
    }
}
