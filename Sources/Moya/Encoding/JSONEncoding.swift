import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body, as Alamofire 5's `JSONEncoding`.
///
/// The body is written with `JSONSerialization`, and the request gets
/// `Content-Type: application/json` unless it already has a Content-Type.
/// Values that are not valid JSON (a `Date`, a custom type, `Double.nan` …) make the encoding
/// throw ``ParameterEncodingError/invalidJSONObject``; they are checked before serializing, so
/// they never reach `JSONSerialization` and can't crash it.
public struct JSONEncoding: ParameterEncoding, Sendable {
    /// Compact JSON (no writing options).
    public static let `default` = JSONEncoding()

    /// Indented, human-readable JSON.
    public static let prettyPrinted = JSONEncoding(options: .prettyPrinted)

    /// The options passed to `JSONSerialization.data(withJSONObject:options:)`.
    public let options: JSONSerialization.WritingOptions

    /// Creates a JSON encoding.
    ///
    /// - Parameters:
    ///   - options: The `JSONSerialization` writing options. None by default.
    public init(options: JSONSerialization.WritingOptions = []) {
        self.options = options
    }

    /// Returns a copy of `urlRequest` whose body is `parameters` as JSON.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode the parameters into.
    ///   - parameters: The parameters; `nil` returns the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: ``ParameterEncodingError/invalidJSONObject`` when the parameters are not valid JSON,
    ///   ``ParameterEncodingError/jsonEncodingFailed(_:)`` when serialization fails,
    ///   ``ParameterEncodingError/missingURL`` when the request has no URL (on Linux such a request
    ///   can't be modified), or any error thrown by `urlRequest.asURLRequest()`.
    public func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        try encode(urlRequest, withJSONObject: parameters)
    }

    /// Returns a copy of `urlRequest` whose body is `jsonObject` as JSON.
    ///
    /// Use it for a top-level array or any other JSON object that is not a dictionary. A
    /// top-level string, number or null is accepted only when ``options`` contains
    /// `.fragmentsAllowed`.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode the object into.
    ///   - jsonObject: The object to write; `nil` returns the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: ``ParameterEncodingError/invalidJSONObject`` when the object is not valid JSON,
    ///   ``ParameterEncodingError/jsonEncodingFailed(_:)`` when serialization fails,
    ///   ``ParameterEncodingError/missingURL`` when the request has no URL (on Linux such a request
    ///   can't be modified), or any error thrown by `urlRequest.asURLRequest()`.
    public func encode(_ urlRequest: URLRequestConvertible, withJSONObject jsonObject: Any? = nil) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let jsonObject else { return urlRequest }
        // swift-corelibs-foundation traps when a URL-less request is copied on write.
        guard urlRequest.url != nil else { throw ParameterEncodingError.missingURL }

        // Check first: on Linux, `JSONSerialization.data` traps (instead of throwing) on a top-level
        // fragment written without `.fragmentsAllowed`. `isValidJSONObject` only accepts arrays and
        // dictionaries at the top level, so a fragment is checked inside an array when allowed.
        let objectToValidate: Any = options.contains(.fragmentsAllowed) ? [jsonObject] : jsonObject
        guard JSONSerialization.isValidJSONObject(objectToValidate) else {
            throw ParameterEncodingError.invalidJSONObject
        }

        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
        } catch {
            throw ParameterEncodingError.jsonEncodingFailed(error)
        }
        if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        urlRequest.httpBody = data
        return urlRequest
    }
}
