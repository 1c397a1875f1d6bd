import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaError {
    /// What exactly went wrong, for people reading logs: the specifics that
    /// ``errorDescription`` (Moya's fixed sentences) leaves out.
    ///
    /// - ``statusCode(_:)``: the status code, and the method and URL of the request.
    /// - ``jsonMapping(_:)`` and ``stringMapping(_:)``: the parser's message, or the key path
    ///   that was missing or held something else, when the mapping methods of ``Response``
    ///   threw the error; and the response's status, size and content type.
    /// - ``objectMapping(_:_:)`` and ``encodableMapping(_:)``: the coding path and debug
    ///   description of the `DecodingError` or `EncodingError`.
    /// - ``underlying(_:_:)`` and ``parameterEncoding(_:)``: the wrapped error's failure reason,
    ///   or the cause it wraps in turn.
    ///
    /// URLs are shown without user, password, query or fragment, so that credentials and
    /// tokens in them do not end up in logs.
    public var failureReason: String? {
        switch self {
        case .imageMapping(let response):
            return Self.summary(of: response)
        case .jsonMapping(let response):
            return Self.sentences(MappingFailure.recorded(.json, for: response)?.reason, Self.summary(of: response))
        case .stringMapping(let response):
            return Self.sentences(MappingFailure.recorded(.string, for: response)?.reason, Self.summary(of: response))
        case .objectMapping(let error, let response):
            return Self.sentences(Self.reason(decoding: error), Self.summary(of: response))
        case .encodableMapping(let error):
            return Self.reason(encoding: error)
        case .statusCode(let response):
            let phrase = HTTPURLResponse.localizedString(forStatusCode: response.statusCode)
            let request = Self.requestLine(of: response).map { " to \($0)" } ?? ""
            return "The server answered \(response.statusCode) (\(phrase))\(request)."
        case .underlying(let error, let response):
            return Self.sentences(Self.reason(wrapped: error), response.map { Self.summary(of: $0) })
        case .requestMapping(let url):
            return "\"\(url)\" could not be made into a URL request."
        case .parameterEncoding(let error):
            return Self.reason(wrapped: error)
        }
    }

    /// Joins the non-`nil` sentences with a space; `nil` when there are none.
    private static func sentences(_ parts: String?...) -> String? {
        let present = parts.compactMap { $0 }
        return present.isEmpty ? nil : present.joined(separator: " ")
    }

    /// "Response: status 200, 12 bytes of text/html, from GET http://host/path."
    private static func summary(of response: Response) -> String {
        var text = "Response: status \(response.statusCode), \(response.data.count) byte\(response.data.count == 1 ? "" : "s")"
        if let contentType = response.response?.value(forHTTPHeaderField: "Content-Type") {
            text += " of \(contentType)"
        }
        if let request = requestLine(of: response) {
            text += ", from \(request)"
        }
        return text + "."
    }

    /// "GET http://host/path", or `nil` when neither the request nor the response has a URL.
    private static func requestLine(of response: Response) -> String? {
        guard let url = response.response?.url ?? response.request?.url else { return nil }
        let method = response.request?.httpMethod.map { "\($0) " } ?? ""
        return method + displayString(of: url)
    }

    /// The URL without user, password, query and fragment; an omitted query shows as `?…`.
    private static func displayString(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return "(a URL)"
        }
        let hadQuery = components.percentEncodedQuery != nil
        components.user = nil
        components.password = nil
        components.percentEncodedQuery = nil
        components.fragment = nil
        return (components.string ?? "(a URL)") + (hadQuery ? "?…" : "")
    }

    /// The coding path and explanation of a `DecodingError`; other errors' descriptions.
    private static func reason(decoding error: any Error) -> String {
        guard let decodingError = error as? DecodingError else {
            return plainDescription(of: error)
        }
        switch decodingError {
        case .typeMismatch(let type, let context):
            return "Type mismatch at \(DecodingError.describe(context.codingPath)): expected \(type). \(details(of: context))"
        case .valueNotFound(let type, let context):
            return "No value at \(DecodingError.describe(context.codingPath)): expected \(type). \(details(of: context))"
        case .keyNotFound(let key, let context):
            return "Key \"\(key.stringValue)\" not found at \(DecodingError.describe(context.codingPath)). \(details(of: context))"
        case .dataCorrupted(let context):
            return "Data corrupted at \(DecodingError.describe(context.codingPath)). \(details(of: context))"
        @unknown default:
            return plainDescription(of: decodingError)
        }
    }

    /// The coding path and explanation of an `EncodingError`; other errors' descriptions.
    private static func reason(encoding error: any Error) -> String {
        guard case .invalidValue(let value, let context)? = error as? EncodingError else {
            return plainDescription(of: error)
        }
        return "Invalid value \(type(of: value)) at \(DecodingError.describe(context.codingPath)). \(details(of: context))"
    }

    /// A coding error context's debug description, and its underlying error if any.
    private static func details(of context: DecodingError.Context) -> String {
        details(context.debugDescription, context.underlyingError)
    }

    /// An encoding error context's debug description, and its underlying error if any.
    private static func details(of context: EncodingError.Context) -> String {
        details(context.debugDescription, context.underlyingError)
    }

    /// A debug description as a sentence, followed by the underlying error if any.
    private static func details(_ debugDescription: String, _ underlying: (any Error)?) -> String {
        var text = debugDescription
        if !text.isEmpty, !text.hasSuffix(".") {
            text += "."
        }
        if let underlying {
            text += (text.isEmpty ? "" : " ") + "Underlying error: \(String(describing: underlying))"
        }
        return text
    }

    /// The error's own description (see ``ErrorText/describe(_:)``).
    private static func plainDescription(of error: any Error) -> String {
        ErrorText.describe(error)
    }

    /// The failure reason of a wrapped error (a `LocalizedError`'s, or the one in an `NSError`'s
    /// user info, where the transport's `URLError`s keep theirs), or a description of the error
    /// it wraps in turn (a `URLError` from the transport keeps AsyncHTTPClient's or NIO's error
    /// there).
    private static func reason(wrapped error: any Error) -> String? {
        if let localized = error as? LocalizedError, let reason = localized.failureReason {
            return reason
        }
        let userInfo = (error as NSError).userInfo
        if let reason = userInfo[NSLocalizedFailureReasonErrorKey] as? String, !reason.isEmpty {
            return reason
        }
        if let cause = userInfo[NSUnderlyingErrorKey] {
            return "Cause: \(String(describing: cause))"
        }
        return nil
    }
}
