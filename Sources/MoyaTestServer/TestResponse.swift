import Foundation
import NIOHTTP1

/// A complete, buffered response produced by one of the simple routes.
struct TestResponse {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: [UInt8]

    init(status: HTTPResponseStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `object` serialised with `JSONSerialization` (sorted keys).
    ///
    /// `object` may contain `String`, `Int`, `Bool`, `NSNull`, arrays and `[String: Any]`.
    static func json(_ object: Any, status: HTTPResponseStatus = .ok, headers: HTTPHeaders = HTTPHeaders()) -> TestResponse {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            data = Data(#"{"error": "could not encode JSON"}"#.utf8)
            return TestResponse(status: .internalServerError, headers: headers, body: Array(data))
        }
        return TestResponse(status: status, headers: headers, body: Array(data))
    }

    /// `value` itself, or `NSNull` (JSON `null`) when it is `nil`.
    static func nullable(_ value: String?) -> Any {
        if let value { return value }
        return NSNull()
    }

    /// A `text/plain; charset=utf-8` response.
    static func text(_ text: String, status: HTTPResponseStatus = .ok) -> TestResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return TestResponse(status: status, headers: headers, body: Array(text.utf8))
    }

    /// `400 Bad Request` with `{"error": message}`.
    static func badRequest(_ message: String) -> TestResponse {
        .json(["error": message], status: .badRequest)
    }

    /// `404 Not Found` with `{"error": "not found"}`.
    static var notFound: TestResponse {
        .json(["error": "not found"], status: .notFound)
    }
}
