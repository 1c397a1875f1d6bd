#if MoyaOpenAPI
import Foundation
import HTTPTypes
import Moya

/// One call of an operation of a client that swift-openapi-generator made, as the target of a
/// `MoyaProvider`: what ``MoyaTransport`` hands the provider for each request.
///
/// Plugins, request closures and interceptors see it as they see any target, and can tell
/// operations apart by ``operationID`` (the `operationId` of the OpenAPI document):
///
/// ```swift
/// struct OperationLog: PluginType {
///     func willSend(_ request: any RequestType, target: any TargetType) {
///         if let operation = target as? OpenAPIOperation {
///             print("calling", operation.operationID, operation.path)
///         }
///     }
/// }
/// ```
///
/// The request's URL is the one the generated client wrote, byte for byte: its path and query
/// are percent-encoded as the generator encodes them (``percentEncodedPath``,
/// ``percentEncodedQuery``), and only the scheme, host and port of the endpoint's URL are used,
/// so that an endpoint closure can point the provider at another server. ``path`` is the same
/// path percent-decoded, as a target's path is.
///
/// Its validation type is `.none`: every status code reaches the generated client, which
/// decides what each one means. Its sample data is empty; stub an operation with an endpoint
/// closure whose sample response closure answers for its ``operationID``.
public struct OpenAPIOperation: TargetType, Sendable, CustomStringConvertible {
    /// The `operationId` of the operation in the OpenAPI document.
    public let operationID: String

    /// The server URL the generated client was made with.
    public let baseURL: URL

    /// The operation's path after ``baseURL``, percent-decoded (`/etag/"v1"`).
    public let path: String

    /// The operation's path after ``baseURL`` as the generated client encoded it
    /// (`/etag/%22v1%22`).
    public let percentEncodedPath: String

    /// The query as the generated client encoded it, without the `?`; `nil` when the request has
    /// none.
    public let percentEncodedQuery: String?

    /// The request's method.
    public let method: Moya.Method

    /// The request's header fields, a field repeated by the client once per occurrence.
    public let headerFields: HTTPFields

    /// The sample data of a stub: empty unless set.
    public var sampleData: Data

    /// An operation from the request a generated client made.
    ///
    /// - Parameters:
    ///   - operationID: The operation's `operationId`.
    ///   - request:     The request: its method, its path and query (percent-encoded) and its
    ///                  header fields.
    ///   - baseURL:     The server URL the client was made with.
    ///   - sampleData:  The body of a stubbed response.
    /// - Throws: ``MoyaTransportError/invalidRequestURL(path:baseURL:)`` when `request` has no
    ///   path, or its path and `baseURL` do not make a URL.
    public init(operationID: String, request: HTTPRequest, baseURL: URL, sampleData: Data = Data()) throws {
        // The path and query as the generator wrote them, split at the first `?`, appended to
        // the server URL's path: plain string work, checked once by parsing the whole URL
        // (URLComponents, three times per request, cost more than the rest of the conversion).
        guard let requestPath = request.path, baseURL.query == nil, baseURL.fragment == nil,
            let resolvedURL = URL(string: baseURL.absoluteString + requestPath)
        else {
            throw MoyaTransportError.invalidRequestURL(path: request.path, baseURL: baseURL)
        }
        let pathEnd = requestPath.firstIndex(of: "?") ?? requestPath.endIndex
        let percentEncodedPath = String(requestPath[..<pathEnd])
        self.operationID = operationID
        self.baseURL = baseURL
        self.percentEncodedPath = percentEncodedPath
        // Foundation's decoding costs microseconds even when there is nothing to decode.
        self.path =
            percentEncodedPath.utf8.contains(UInt8(ascii: "%")) ? (percentEncodedPath.removingPercentEncoding ?? percentEncodedPath) : percentEncodedPath
        self.percentEncodedQuery = pathEnd == requestPath.endIndex ? nil : String(requestPath[requestPath.index(after: pathEnd)...])
        self.method = Moya.Method(rawValue: request.method.rawValue)
        self.headerFields = request.headerFields
        self.sampleData = sampleData
        self.resolvedURL = resolvedURL
    }

    /// The request's whole URL on ``baseURL``'s server.
    let resolvedURL: URL

    /// The header fields as a target's dictionary: the values of a repeated field are joined
    /// with `", "` (`"; "` for `Cookie`). `Content-Length` and `Transfer-Encoding` are left out:
    /// the body that ``MoyaTransport`` sends sets them.
    public var headers: [String: String]? {
        var headers: [String: String] = [:]
        for field in headerFields where field.name != .contentLength && field.name != .transferEncoding {
            let name = field.name.canonicalName
            if let existing = headers[name] {
                headers[name] = existing + (field.name == .cookie ? "; " : ", ") + field.value
            } else {
                headers[name] = field.value
            }
        }
        return headers
    }

    /// No body of its own: ``MoyaTransport`` sends the generated client's body as a stream, and
    /// the URL's path and query are set to the ones the client encoded.
    public var task: Moya.Task {
        .requestParameters(
            parameters: [:],
            encoding: OpenAPIURLEncoding(
                baseURL: baseURL, resolvedURL: resolvedURL, percentEncodedPath: fullPercentEncodedPath, percentEncodedQuery: percentEncodedQuery))
    }

    /// `.none`: the generated client handles every status code.
    public var validationType: ValidationType { .none }

    /// `"<operationID> <METHOD> <path>"`.
    public var description: String {
        "\(operationID) \(method.rawValue) \(path)"
    }

    /// The base URL's path followed by the operation's, as encoded.
    private var fullPercentEncodedPath: String {
        baseURL.path(percentEncoded: true) + percentEncodedPath
    }
}

/// Metrics and traces name each request by its operation: the `moya.target` dimension of the
/// metrics (when the session's ``Moya/Session/Configuration/MetricsOptions/includesTargetName``
/// is set) and the `moya.target` attribute of the client span are the ``operationID``.
extension OpenAPIOperation: NamedTarget {
    /// The ``operationID``.
    public var operationName: String { operationID }
}

/// Every operation asks for a bearer token: with an `AccessTokenPlugin` on the provider, each
/// request carries one (the generator does not read the document's security schemes). Its
/// token closure gets the ``OpenAPIOperation`` and may answer per ``OpenAPIOperation/operationID``.
extension OpenAPIOperation: AccessTokenAuthorizable {
    /// `.bearer`, for every operation.
    public var authorizationType: AuthorizationType? { .bearer }
}
#endif
