import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Logs requests and responses: by default the URL, method and headers of each request, and
/// the status and headers of each response, printed to standard output.
///
/// ```swift
/// let provider = MoyaProvider<GitHub>(plugins: [NetworkLoggerPlugin()])
/// let verbose = MoyaProvider<GitHub>(plugins: [NetworkLoggerPlugin(configuration: .init(logOptions: .verbose))])
/// ```
///
/// ``Configuration`` chooses what is logged (``Configuration/LogOptions``), how each entry and
/// each body is written (``Configuration/Formatter``) and where the entries go
/// (``Configuration/output``: `print` by default, or a swift-log `Logger` with
/// ``Configuration/init(logger:level:logOptions:redaction:)``).
///
/// Each hook produces one batch of entries, handed to the output in one call. Real and stubbed
/// requests are logged alike, including their cURL form. Credentials are hidden by default
/// (authorization headers, cookies, passwords, and parameters and body fields named like
/// `password`, `token` or `api_key`), and targets are named without their associated values:
/// see ``Configuration/Redaction``.
///
/// The plugin is `Sendable`: keep one in a `static let` and share it between providers. Its
/// ``configuration`` may be changed while requests run; each hook reads it once.
public final class NetworkLoggerPlugin: PluginType, Sendable {
    /// What is logged, how, and where.
    public var configuration: Configuration {
        get { state.current }
        set { state.withLock { $0 = newValue } }
    }

    private let state: Protected<Configuration>

    /// Creates a logger.
    ///
    /// - Parameter configuration: What is logged, how, and where; by default the request's
    ///   method and headers, printed.
    public init(configuration: Configuration = Configuration()) {
        self.state = Protected(configuration)
    }

    /// Creates a logger the way older Moya releases did (`NetworkLoggerPlugin(verbose: true)`).
    ///
    /// - Parameters:
    ///   - verbose: `true` for ``Configuration/LogOptions/verbose`` (bodies too), `false` for
    ///     ``Configuration/LogOptions/default``.
    ///   - cURL:    `true` to log each request as a cURL command instead.
    public convenience init(verbose: Bool, cURL: Bool = false) {
        var options: Configuration.LogOptions = verbose ? .verbose : .default
        if cURL {
            options.insert(.formatRequestAscURL)
        }
        self.init(configuration: Configuration(logOptions: options))
    }

    /// A new logger with ``Configuration/LogOptions/default``.
    public class var `default`: NetworkLoggerPlugin {
        NetworkLoggerPlugin(configuration: Configuration(logOptions: .default))
    }

    /// A new logger with ``Configuration/LogOptions/verbose``.
    public class var verbose: NetworkLoggerPlugin {
        NetworkLoggerPlugin(configuration: Configuration(logOptions: .verbose))
    }

    /// Logs the request.
    ///
    /// - Parameters:
    ///   - request: The request about to be sent.
    ///   - target:  Its target.
    public func willSend(_ request: RequestType, target: TargetType) {
        let configuration = self.configuration
        configuration.output(target, requestEntries(for: request, target: target, configuration: configuration))
    }

    /// Logs a retry an interceptor decided (a `RetryPolicy` after a `503`, an
    /// `AuthenticationInterceptor` after a `401`): the attempt that starts next and why, as
    /// `Retry: getNote: attempt 2 after 503 (service unavailable)`. The headers each attempt is
    /// sent with, when the interceptors changed them, are logged as `Adapted Request Headers`
    /// (see ``didObserve(_:target:)``).
    ///
    /// - Parameters:
    ///   - request: The attempt that is retried, as it was sent.
    ///   - result:  Its outcome: the server's response, or the error.
    ///   - attempt: The number of the attempt about to start (2 for the first retry).
    ///   - target:  The target.
    public func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
        let configuration = self.configuration
        let formatter = configuration.formatter
        let redaction = configuration.redaction
        let reason: String
        switch result {
        case .success(let response):
            reason = "\(response.statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))"
        case .failure(let error):
            reason = redaction.describe(errorText: "\(error)")
        }
        configuration.output(target, [formatter.entry("Retry", "\(redaction.name(of: target)): attempt \(attempt) after \(reason)", target)])
    }

    /// Logs the response, or the error when there is no response.
    ///
    /// A streamed response (`provider.stream`, a generated OpenAPI client) was logged when its
    /// head arrived (see ``didObserve(_:target:)``); its end is logged here as
    /// `Response End: getNote: 200, 1234 body bytes`.
    ///
    /// - Parameters:
    ///   - result: The request's result.
    ///   - target: Its target.
    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        let configuration = self.configuration
        let entries: [String]
        switch result {
        case .success(let response):
            if let byteCount = response.streamedBodyByteCount {
                let message = "\(configuration.redaction.name(of: target)): \(response.statusCode), \(byteCount) body bytes"
                entries = [configuration.formatter.entry("Response End", message, target)]
            } else {
                entries = responseEntries(for: response, target: target, isFromError: false, configuration: configuration)
            }
        case .failure(let error):
            if let response = error.response {
                entries = responseEntries(for: response, target: target, isFromError: true, configuration: configuration)
            } else {
                let redaction = configuration.redaction
                let message = redaction.describe(errorText: "Error calling \(redaction.name(of: target)) : \(error)")
                entries = [configuration.formatter.entry("Error", message, target)]
            }
        }
        configuration.output(target, entries)
    }

    // MARK: - Entries

    private func requestEntries(for request: RequestType, target: TargetType, configuration: Configuration) -> [String] {
        let formatter = configuration.formatter
        let options = configuration.logOptions
        let redaction = configuration.redaction

        if options.contains(.formatRequestAscURL) {
            return [formatter.entry("Request", cURL(for: request, redaction: redaction), target)]
        }

        guard let urlRequest = request.request else {
            return [formatter.entry("Request", "(invalid request)", target)]
        }

        var entries = [formatter.entry("Request", redaction.describe(urlRequest) + Self.operationSuffix(of: target), target)]
        if options.contains(.requestHeaders) {
            let headers = request.sessionHeaders.merging(urlRequest.allHTTPHeaderFields ?? [:]) { $1 }
            entries.append(formatter.entry("Request Headers", redaction.describe(headers: headers), target))
        }
        if options.contains(.requestBody) {
            if let stream = urlRequest.httpBodyStream {
                entries.append(formatter.entry("Request Body Stream", stream.description, target))
            }
            if let body = urlRequest.httpBody {
                let shown = redaction.redactingBody(body, contentType: urlRequest.value(forHTTPHeaderField: "Content-Type"))
                entries.append(formatter.entry("Request Body", formatter.requestData(shown), target))
            }
        }
        if options.contains(.requestMethod), let method = urlRequest.httpMethod {
            entries.append(formatter.entry("HTTP Request Method", method, target))
        }
        return entries
    }

    private func responseEntries(for response: Moya.Response, target: TargetType, isFromError: Bool, configuration: Configuration) -> [String] {
        let formatter = configuration.formatter
        var entries: [String] = []
        entries.append(formatter.entry("Response", Self.describeHead(response, target: target, redaction: configuration.redaction), target))
        // Unlike Moya, `.successResponseBody` does not log the bodies of failed requests.
        // A `101` (a WebSocket handshake's answer) has no body: the connection that follows is
        // logged by its own entries.
        let logsBody = configuration.logOptions.contains(isFromError ? .errorResponseBody : .successResponseBody) && response.statusCode != 101
        if logsBody {
            let contentType = response.response?.value(forHTTPHeaderField: "Content-Type")
            let shown = configuration.redaction.redactingBody(response.data, contentType: contentType)
            entries.append(formatter.entry("Response Body", formatter.responseData(shown), target))
        }
        return entries
    }

    /// ` (<operation>)` for a ``NamedTarget`` (a generated client's operations share one target
    /// type, so the URL alone does not say which one a line is about); empty for other targets,
    /// whose entries read as in Moya.
    static func operationSuffix(of target: TargetType) -> String {
        target.namedOperation.map { " (\($0))" } ?? ""
    }

    /// The request as a cURL command. For a request type of someone else's, its own
    /// ``RequestType/cURLDescription(calling:)``, with what the redaction hides replaced (see
    /// `Redaction.describe(cURL:)`); Moya's own requests are written from the request itself.
    private func cURL(for request: RequestType, redaction: Configuration.Redaction) -> String {
        if let wrapper = request as? RequestTypeWrapper {
            return CURLCommand.describe(
                request: wrapper.request,
                sessionHeaders: wrapper.sessionHeaders,
                credential: wrapper.credentials.credential,
                redaction: redaction
            )
        }
        // A request type of someone else's: ask it, and take the answer if it comes now.
        var description: String?
        _ = request.cURLDescription { description = $0 }
        if let description { return redaction.describe(cURL: description) }
        return CURLCommand.describe(request: request.request, sessionHeaders: request.sessionHeaders, credential: nil, redaction: redaction)
    }
}

extension NetworkLoggerPlugin {
    /// `target`'s name as the logger writes it (``TargetType/caseName(includingPath:)``).
    static func caseName(of target: TargetType, includingPath: Bool = true) -> String {
        target.caseName(includingPath: includingPath)
    }
}
