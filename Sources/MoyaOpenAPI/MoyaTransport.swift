#if MoyaOpenAPI
import Foundation
import HTTPTypes
import Moya
import OpenAPIRuntime

/// A `ClientTransport` that sends the requests of a client made by swift-openapi-generator
/// through a `MoyaProvider`.
///
/// ```swift
/// let provider = MoyaProvider<OpenAPIOperation>(plugins: [NetworkLoggerPlugin()])
/// let client = Client(serverURL: serverURL, transport: MoyaTransport(provider: provider))
/// ```
///
/// Each operation is an ``OpenAPIOperation``, sent as any target is: the provider's endpoint
/// and request closures, stubs, plugins (`prepare`, `willSend`, `didReceive`, `process`) and
/// interceptors, and its session's cookie jar, proxies, trust evaluation, metrics, tracing and
/// limits all apply. Plugins and interceptors tell operations apart by
/// ``OpenAPIOperation/operationID``, and metrics and spans name each request by it
/// (`moya.target`).
///
/// Interceptors decide on each response's head before the client gets it, as they decide on a
/// response that is not streamed: a `RetryPolicy` retries a `503`, an
/// `AuthenticationInterceptor` refreshes its credential after a `401` and sends the request
/// again. The response they retry is closed with its body unread; the one they accept is
/// handed to the client. The `Moya.Response` they see holds the head and an empty body.
///
/// The session's HTTP cache answers operations as it answers other requests: a fresh stored
/// response, or one the server confirms with a `304`, streams from the cache.
///
/// The request body is sent while the generated client produces it; a redirect that keeps the
/// body (`307`, `308`) or an interceptor's retry sends it again only when the body's
/// `iterationBehavior` is `.multiple`, and otherwise fails with Moya's
/// `NonReplayableBodyError`. The response is handed back once its head has arrived, with a
/// body that is read as it arrives (``streamOptions`` sets its buffer and idle timeout), so a
/// large response is never held in memory. Each header field the server sent reaches the
/// client, a repeated one (two `Set-Cookie` fields) once per occurrence.
///
/// Every status code reaches the client. A failure of the exchange is thrown as the provider's
/// `MoyaError`, which the generated client wraps in its `ClientError` (as `underlyingError`).
/// Cancelling the task that called the client cancels the request.
public struct MoyaTransport: ClientTransport, Sendable {
    /// The provider every request goes through.
    public let provider: MoyaProvider<OpenAPIOperation>

    /// The buffer size and idle timeout of the response bodies.
    public var streamOptions: StreamOptions

    /// A transport that sends its requests through `provider`.
    ///
    /// - Parameters:
    ///   - provider:      The provider, with its session, plugins, interceptors and stubs.
    ///   - streamOptions: The buffer size and idle timeout of the response bodies.
    public init(provider: MoyaProvider<OpenAPIOperation> = MoyaProvider(), streamOptions: StreamOptions = .default) {
        self.provider = provider
        self.streamOptions = streamOptions
    }

    /// Sends `request` with `body` to the server at `baseURL` through the provider.
    ///
    /// - Parameters:
    ///   - request:     The request the generated client made.
    ///   - body:        Its body, if any.
    ///   - baseURL:     The server URL the client was made with.
    ///   - operationID: The operation's `operationId`, visible to plugins as
    ///                  ``OpenAPIOperation/operationID``.
    /// - Returns: The response's head and its body, still to be read (`nil` for `HEAD`).
    /// - Throws: The provider's `MoyaError`, or ``MoyaTransportError`` when the request's URL
    ///   cannot be made.
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let operation = try OpenAPIOperation(operationID: operationID, request: request, baseURL: baseURL)
        let streamed: StreamedResponse
        if let body {
            streamed = try await provider.stream(operation, body: RequestBodyStream(body), options: streamOptions)
        } else {
            streamed = try await provider.stream(operation, options: streamOptions)
        }
        var fields = HTTPFields()
        let headerFields = streamed.headerFields
        fields.reserveCapacity(headerFields.count)
        // The length is read here: a lookup in `HTTPFields` first builds an index of its names.
        // Two different lengths make it unknown.
        var length: Int64?
        var lengths = 0
        for field in headerFields {
            guard let name = HTTPField.Name(field.name) else { continue }
            if name == .contentLength {
                let value = Int64(field.value)
                length = lengths == 0 || value == length ? value : nil
                lengths += 1
            }
            fields.append(HTTPField(name: name, value: field.value))
        }
        let response = HTTPResponse(status: HTTPResponse.Status(code: streamed.statusCode), headerFields: fields)
        if request.method == .head || length == 0 {
            // Nothing to read: the body is read to its end here, so that the plugins hear of a
            // completed response rather than of a consumer that stopped.
            for try await _ in streamed.body {}
            return (response, request.method == .head ? nil : HTTPBody())
        }
        return (response, HTTPBody(streamed.body, length: length.map { .known($0) } ?? .unknown, iterationBehavior: .single))
    }
}
#endif
