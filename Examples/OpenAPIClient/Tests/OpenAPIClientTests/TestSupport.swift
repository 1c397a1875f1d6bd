import Foundation
import HTTPBinAPI
import HTTPTypes
import Moya
import MoyaOpenAPI
import OpenAPIRuntime
import Synchronization

/// The httpbin the tests call; CI starts one and sets `MOYA_HTTPBIN_URL`.
let testHTTPBin = ProcessInfo.processInfo.environment["MOYA_HTTPBIN_URL"].flatMap(URL.init(string:))

/// A middleware that keeps every response the transport handed back (its head and, up to
/// 1 MiB, its body) and passes it on unchanged.
final class ResponseRecorder: ClientMiddleware, Sendable {
    /// What was received, in order: the operation, the response and its body.
    private let recorded = Mutex<[(operationID: String, response: HTTPResponse, body: Data)]>([])

    /// The responses received so far.
    var responses: [(operationID: String, response: HTTPResponse, body: Data)] { recorded.withLock { $0 } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        var data = Data()
        if let responseBody {
            data = try await Data(collecting: responseBody, upTo: 1 << 20)
        }
        recorded.withLock { $0.append((operationID, response, data)) }
        return (response, responseBody == nil ? nil : HTTPBody(data))
    }
}

/// A middleware that adds the `Authorization` header of Basic credentials to every request: the
/// generator does not read the document's security schemes.
struct BasicAuthMiddleware: ClientMiddleware {
    /// `user:password`.
    let credentials: String

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Basic " + Data(credentials.utf8).base64EncodedString()
        return try await next(request, body, baseURL)
    }
}

/// A plugin that keeps the operation of every request it sees sent.
final class OperationRecorder: PluginType, Sendable {
    private let seen = Mutex<[String]>([])

    /// The operation IDs of the requests sent, in order.
    var operationIDs: [String] { seen.withLock { $0 } }

    func willSend(_ request: RequestType, target: TargetType) {
        guard let operation = target as? OpenAPIOperation else { return }
        seen.withLock { $0.append(operation.operationID) }
    }
}

/// A client of `serverURL` through `provider`.
func moyaClient(_ serverURL: URL, provider: MoyaProvider<OpenAPIOperation> = MoyaProvider(), middlewares: [any ClientMiddleware] = []) -> Client {
    Client(serverURL: serverURL, transport: MoyaTransport(provider: provider), middlewares: middlewares)
}

/// The lines a `NetworkLoggerPlugin` wrote.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    /// Everything written, one line after another.
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    /// Every entry written, in order.
    var entries: [String] { lines.withLock { $0 } }

    /// Keeps `items`.
    func append(_ items: [String]) {
        lines.withLock { $0.append(contentsOf: items) }
    }
}

/// A middleware that replaces the request's body with the one `makeBody` makes.
struct BodyReplacer: ClientMiddleware {
    let makeBody: @Sendable () -> HTTPBody

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        try await next(request, makeBody(), baseURL)
    }
}

/// Chunks of bytes as an async sequence that can be iterated any number of times, each chunk
/// after a suspension, as a body read from elsewhere would come.
struct Chunks: AsyncSequence, Sendable {
    let chunks: [ArraySlice<UInt8>]

    init(_ chunks: [ArraySlice<UInt8>]) {
        self.chunks = chunks
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(rest: chunks[...])
    }

    /// Hands out the chunks in order.
    struct Iterator: AsyncIteratorProtocol {
        var rest: ArraySlice<ArraySlice<UInt8>>

        mutating func next() async -> ArraySlice<UInt8>? {
            await _Concurrency.Task.yield()
            return rest.popFirst()
        }
    }
}
