import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private struct User: Decodable {
    let name: String
    let id: Int
}

private struct Inner: Error, LocalizedError {
    var errorDescription: String? { "inner description" }
    var failureReason: String? { "the inner reason" }
}

/// A response from `url` with `body`, for a `method` request.
private func response(
    _ body: String, status: Int = 200, url: String = "https://api.example.com/users/42",
    method: String = "GET", contentType: String = "application/json"
) -> Moya.Response {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    let http = HTTPURLResponse(url: URL(string: url)!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": contentType])
    return Moya.Response(statusCode: status, data: Data(body.utf8), request: request, response: http)
}

/// The error `body` throws, as a `MoyaError`.
private func moyaError(_ body: () throws -> Any) throws -> MoyaError {
    do {
        _ = try body()
    } catch let error as MoyaError {
        return error
    }
    Issue.record("expected a MoyaError")
    throw CancellationError()
}

@Suite("MoyaError descriptions name the specifics")
struct MoyaErrorDescriptionTests {
    @Test("description is errorDescription plus failureReason; print and interpolation show it")
    func descriptionShape() {
        let error = MoyaError.statusCode(response("{}", status: 404))
        #expect(error.errorDescription == "Status code didn't fall within the given range.")
        let reason = error.failureReason
        #expect(reason == "The server answered 404 (\(HTTPURLResponse.localizedString(forStatusCode: 404))) to GET https://api.example.com/users/42.")
        #expect(error.description == "Status code didn't fall within the given range. \(reason ?? "")")
        #expect("\(error)" == error.description)
        var printed = ""
        print(error, terminator: "", to: &printed)
        #expect(printed == error.description)
        #expect(error.debugDescription.hasPrefix("MoyaError.statusCode: Status code didn't fall within the given range. The server answered 404"))
        #expect(String(reflecting: error) == error.debugDescription)
    }

    @Test("URLs are shown without credentials, query or fragment")
    func urlRedaction() {
        let error = MoyaError.statusCode(response("{}", status: 500, url: "https://user:secret@api.example.com/v1/items?token=abc#frag", method: "POST"))
        let text = "\(error)"
        #expect(text.contains("500"))
        #expect(text.contains("POST https://api.example.com/v1/items?…"), "\(text)")
        #expect(!text.contains("secret"))
        #expect(!text.contains("token=abc"))
        #expect(!text.contains("frag"))
    }

    @Test("jsonMapping: the parser's message, or the key path that is missing")
    func jsonMapping() throws {
        let html = response("<html>", contentType: "text/html")
        let invalid = try moyaError { try html.mapJSON() }
        #expect(invalid.errorDescription == "Failed to map data to JSON.")
        #expect("\(invalid)".contains("The body is not valid JSON"), "\(invalid)")
        #expect("\(invalid)".contains("6 bytes of text/html"), "\(invalid)")

        let empty = try moyaError { try response("").mapJSON() }
        #expect("\(empty)".contains("The body is empty."))

        let missing = try moyaError { try response(#"{"data": {"other": 1}}"#).map([String].self, atKeyPath: "data.items") }
        guard case .jsonMapping(let mapped) = missing else {
            Issue.record("expected jsonMapping, got \(missing)")
            return
        }
        #expect(missing.errorDescription == "Failed to map data to JSON.")
        #expect("\(missing)".contains(#"The JSON body has no value at the key path "data.items"."#), "\(missing)")
        #expect(missing.failureReason?.contains("data.items") == true)
        #expect(mapped.statusCode == 200)

        let array = try moyaError { try response("[1, 2]").map([String].self, atKeyPath: "items") }
        #expect("\(array)".contains(#"not a dictionary, so it has no key path "items""#), "\(array)")
    }

    @Test("stringMapping: the key path, or what was found there")
    func stringMapping() throws {
        let body = response(#"{"user": {"age": 42, "name": "Ada"}}"#)
        #expect(try body.mapString(atKeyPath: "user.name") == "Ada")
        let missing = try moyaError { try body.mapString(atKeyPath: "user.email") }
        #expect(missing.errorDescription == "Failed to map data to a String.")
        #expect("\(missing)".contains(#"no value at the key path "user.email""#), "\(missing)")

        let notString = try moyaError { try body.mapString(atKeyPath: "user.age") }
        #expect("\(notString)".contains(#"The value at the key path "user.age" is a number"#), "\(notString)")
        #expect("\(notString)".contains("not a string"))

        let binary = Moya.Response(statusCode: 200, data: Data([0xFF, 0xFE, 0x00]))
        let notUTF8 = try moyaError { try binary.mapString() }
        #expect("\(notUTF8)".contains("not valid UTF-8"), "\(notUTF8)")
    }

    @Test("The note belongs to the response and the case: another response's error says nothing of it")
    func notesAreScoped() throws {
        let first = response(#"{"a": 1}"#)
        _ = try moyaError { try first.mapString(atKeyPath: "missing.path") }
        let other = MoyaError.stringMapping(response(#"{"a": 1}"#))
        #expect(!"\(other)".contains("missing.path"))
        let sameResponseOtherCase = MoyaError.jsonMapping(first)
        #expect(!"\(sameResponseOtherCase)".contains("missing.path"))
    }

    @Test("objectMapping: the DecodingError's coding path (from the top of the body) and debug description")
    func objectMapping() throws {
        let wrongType = try moyaError { try response(#"{"name": 1, "id": 2}"#).map(User.self) }
        #expect(wrongType.errorDescription == "Failed to map data to a Decodable object.")
        #expect("\(wrongType)".contains(#"Type mismatch at "name": expected String."#), "\(wrongType)")

        let nested = try moyaError { try response(#"{"data": {"users": [{"name": "a", "id": 1}, {"name": "b"}]}}"#).map([User].self, atKeyPath: "data.users") }
        guard case .objectMapping(let underlying, _) = nested, let decodingError = underlying as? DecodingError,
            case .keyNotFound(let key, let context) = decodingError
        else {
            Issue.record("expected objectMapping(keyNotFound), got \(nested)")
            return
        }
        #expect(key.stringValue == "id")
        #expect(context.codingPath.map(\.stringValue).prefix(2) == ["data", "users"])
        #expect(context.codingPath.last?.intValue == 1)
        #expect("\(nested)".contains(#"Key "id" not found at "data.users[1]"."#), "\(nested)")

        let scalar = try moyaError { try response(#"{"meta": {"count": "many"}}"#).map(Int.self, atKeyPath: "meta.count") }
        guard case .objectMapping(let scalarError as DecodingError, _) = scalar, case .typeMismatch(_, let scalarContext) = scalarError else {
            Issue.record("expected objectMapping(typeMismatch), got \(scalar)")
            return
        }
        #expect(scalarContext.codingPath.map(\.stringValue) == ["meta", "count"])
        #expect("\(scalar)".contains(#"at "meta.count""#), "\(scalar)")

        let corrupt = try moyaError { try response("{not json").map(User.self) }
        #expect("\(corrupt)".contains("Data corrupted at the top level."), "\(corrupt)")
    }

    @Test("encodableMapping: the EncodingError's path and explanation")
    func encodableMapping() {
        struct Payload: Encodable { let ratio: Double }
        let encodingError: any Error
        do {
            _ = try JSONEncoder().encode(Payload(ratio: .nan))
            Issue.record("NaN should not encode")
            return
        } catch {
            encodingError = error
        }
        let error = MoyaError.encodableMapping(encodingError)
        #expect(error.errorDescription == "Failed to encode Encodable object into data.")
        #expect("\(error)".contains(#"Invalid value Double at "ratio"."#), "\(error)")
    }

    @Test("underlying and parameterEncoding: the wrapped error's failure reason or cause")
    func wrapped() {
        let withReason = MoyaError.underlying(Inner(), nil)
        #expect(withReason.errorDescription == "inner description")
        #expect("\(withReason)" == "inner description the inner reason")

        let transport = URLError(
            .cannotConnectToHost,
            userInfo: [
                NSLocalizedDescriptionKey: "Could not connect.",
                NSUnderlyingErrorKey: POSIXError(.ECONNREFUSED),
            ])
        let connection = MoyaError.underlying(transport, nil)
        #expect(connection.errorDescription == "Could not connect.")
        #expect("\(connection)".hasPrefix("Could not connect. Cause: "), "\(connection)")

        let encoding = MoyaError.parameterEncoding(Inner())
        #expect(encoding.errorDescription == "Failed to encode parameters for URLRequest. inner description")
        #expect("\(encoding)".hasSuffix(" the inner reason"))
        #expect(encoding.debugDescription.contains("Underlying error: "))

        #expect("\(MoyaError.requestMapping("not a url"))".contains("\"not a url\""))
    }

    @Test("A rejected status from the server shows the code, method and URL")
    func statusCodeFromServer() async throws {
        let server = try await TestServer.start()
        let provider = MoyaProvider<Remote>()
        let result = await send(provider, Remote(server.baseURL, "/status/404", validationType: .successCodes))
        let error = try #require(result.error)
        #expect(error.isStatusCodeError)
        let text = "\(error)"
        #expect(text.contains("404"), "\(text)")
        #expect(text.contains("GET \(server.baseURL.absoluteString)/status/404"), "\(text)")
        #expect(error.errorDescription == "Status code didn't fall within the given range.")
        await server.shutdown()
    }
}
