import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds a request for the property list encoding tests.
private func makeRequest(_ method: Moya.Method = .post) -> URLRequest {
    var request = URLRequest(url: URL(string: "https://example.com/path?x=1")!)
    request.httpMethod = method.rawValue
    return request
}

/// Reads the request body back as a property list, returning the dictionary and its format.
private func decodeBody(_ request: URLRequest) throws -> ([String: Any], PropertyListSerialization.PropertyListFormat) {
    let body = try #require(request.httpBody)
    var format = PropertyListSerialization.PropertyListFormat.openStep
    let object = try PropertyListSerialization.propertyList(from: body, options: [], format: &format)
    return (try #require(object as? [String: Any]), format)
}

private let xmlHeader = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">

    """

@Suite("PropertyListEncoding")
struct PropertyListEncodingTests {
    @Test("Static encodings and defaults")
    func staticEncodings() {
        #expect(PropertyListEncoding.default.format == .xml)
        #expect(PropertyListEncoding.xml.format == .xml)
        #expect(PropertyListEncoding.binary.format == .binary)
        #expect(PropertyListEncoding().format == .xml)
        #expect(PropertyListEncoding().options == 0)
        #expect(PropertyListEncoding(format: .binary, options: 0).format == .binary)
    }

    @Test("Nil parameters leave the request unchanged", arguments: [PropertyListEncoding.xml, .binary])
    func nilParameters(encoding: PropertyListEncoding) throws {
        let encoded = try encoding.encode(makeRequest(), with: nil)
        #expect(encoded.httpBody == nil)
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(encoded.url?.absoluteString == "https://example.com/path?x=1")
    }

    @Test("XML body is written exactly")
    func xmlBytes() throws {
        let encoded = try PropertyListEncoding.default.encode(makeRequest(), with: ["a": "b"])
        let expected = xmlHeader + "<dict>\n\t<key>a</key>\n\t<string>b</string>\n</dict>\n</plist>\n"
        #expect(encoded.httpBody == Data(expected.utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        #expect(encoded.url?.absoluteString == "https://example.com/path?x=1")
    }

    @Test("Empty parameters give an empty dictionary")
    func emptyParameters() throws {
        let xml = try PropertyListEncoding.xml.encode(makeRequest(), with: [:])
        #expect(xml.httpBody == Data((xmlHeader + "<dict/>\n</plist>\n").utf8))

        let binary = try PropertyListEncoding.binary.encode(makeRequest(), with: [:])
        let (decoded, format) = try decodeBody(binary)
        #expect(decoded.isEmpty)
        #expect(format == .binary)
    }

    @Test("Binary body starts with the bplist00 magic")
    func binaryBytes() throws {
        let encoded = try PropertyListEncoding.binary.encode(makeRequest(), with: ["a": "b"])
        let body = try #require(encoded.httpBody)
        #expect(body.prefix(8) == Data("bplist00".utf8))
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
    }

    @Test(
        "All property list types round-trip",
        arguments: [
            PropertyListSerialization.PropertyListFormat.xml, .binary,
        ])
    func roundTrip(format: PropertyListSerialization.PropertyListFormat) throws {
        let date = Date(timeIntervalSince1970: 1_000_000)
        let parameters: Parameters = [
            "string": "Grüße 😀 <&>",
            "int": 42,
            "double": 1.5,
            "bool": true,
            "date": date,
            "data": Data([0, 1, 255]),
            "array": [1, "two", false],
            "nested": ["inner": ["deep": "value"]],
        ]
        let encoded = try PropertyListEncoding(format: format).encode(makeRequest(), with: parameters)
        let (decoded, decodedFormat) = try decodeBody(encoded)
        #expect(decodedFormat == format)
        #expect(decoded.count == parameters.count)
        #expect(decoded["string"] as? String == "Grüße 😀 <&>")
        #expect(decoded["int"] as? Int == 42)
        #expect(decoded["double"] as? Double == 1.5)
        #expect(decoded["bool"] as? Bool == true)
        #expect(decoded["date"] as? Date == date)
        #expect(decoded["data"] as? Data == Data([0, 1, 255]))
        let array = try #require(decoded["array"] as? [Any])
        #expect(array.count == 3)
        #expect(array.first as? Int == 1)
        #expect(array.dropFirst().first as? String == "two")
        #expect(array.last as? Bool == false)
        #expect((decoded["nested"] as? [String: [String: String]]) == ["inner": ["deep": "value"]])
    }

    @Test(
        "An existing Content-Type is kept, whatever its case",
        arguments: [
            "Content-Type", "content-type", "CONTENT-TYPE",
        ])
    func existingContentTypeKept(headerName: String) throws {
        var request = makeRequest()
        request.setValue("application/custom", forHTTPHeaderField: headerName)
        let encoded = try PropertyListEncoding.default.encode(request, with: ["a": 1])
        #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/custom")
        let contentTypeFields = (encoded.allHTTPHeaderFields ?? [:]).keys.filter { $0.lowercased() == "content-type" }
        #expect(contentTypeFields.count == 1)
    }

    @Test("The body replaces an existing body")
    func bodyReplaced() throws {
        var request = makeRequest()
        request.httpBody = Data("old".utf8)
        let encoded = try PropertyListEncoding.binary.encode(request, with: ["a": "b"])
        let (decoded, _) = try decodeBody(encoded)
        #expect(decoded as? [String: String] == ["a": "b"])
    }

    @Test(
        "Values a property list can't hold throw propertyListEncodingFailed",
        arguments: [
            PropertyListSerialization.PropertyListFormat.xml, .binary,
        ])
    func invalidValues(format: PropertyListSerialization.PropertyListFormat) throws {
        struct Custom {}
        let invalidValues: [Any] = [NSNull(), Custom(), URL(string: "https://example.com")!, Set([1]), ["inner": NSNull()]]
        for value in invalidValues {
            var request = makeRequest()
            request.httpBody = Data("old".utf8)
            let error = #expect(throws: ParameterEncodingError.self) {
                try PropertyListEncoding(format: format).encode(request, with: ["key": value])
            }
            guard case .propertyListEncodingFailed = error else {
                Issue.record("expected .propertyListEncodingFailed for \(value), got \(String(describing: error))")
                continue
            }
        }
    }

    @Test(
        "The OpenStep format, which Foundation can't write, throws instead of crashing",
        arguments: [
            ["a": "b"] as [String: String], [:],
        ])
    func openStepThrows(parameters: [String: String]) throws {
        let error = #expect(throws: ParameterEncodingError.self) {
            try PropertyListEncoding(format: .openStep).encode(makeRequest(), with: parameters)
        }
        guard case .propertyListEncodingFailed(let underlying) = error else {
            Issue.record("expected .propertyListEncodingFailed, got \(String(describing: error))")
            return
        }
        #expect((underlying as? CocoaError)?.code == .propertyListWriteInvalid)
    }

    @Test("A request without a URL throws missingURL")
    func missingURL() throws {
        var request = makeRequest()
        request.url = nil
        let error = #expect(throws: ParameterEncodingError.self) {
            try PropertyListEncoding.default.encode(request, with: ["a": 1])
        }
        guard case .missingURL = error else {
            Issue.record("expected .missingURL, got \(String(describing: error))")
            return
        }
        #expect(try PropertyListEncoding.default.encode(request, with: nil).url == nil)
    }
}
