import Foundation

/// An error thrown by ``URLEncoding``, ``JSONEncoding`` or ``PropertyListEncoding``.
///
/// Moya wraps it in ``MoyaError/parameterEncoding(_:)`` when it builds a request.
public enum ParameterEncodingError: Swift.Error, LocalizedError, CustomStringConvertible {
    /// The request has no URL, so the parameters can't go into its query.
    ///
    /// Thrown for every destination when there are parameters to encode: on Linux,
    /// swift-corelibs-foundation traps when a request without a URL is modified.
    case missingURL
    /// The parameters are not a valid JSON object (see `JSONSerialization.isValidJSONObject(_:)`).
    case invalidJSONObject
    /// `JSONSerialization` failed to write the parameters.
    case jsonEncodingFailed(Swift.Error)
    /// `PropertyListSerialization` failed to write the parameters.
    case propertyListEncodingFailed(Swift.Error)
    /// `Task.requestCompositeParameters` was given a ``URLEncoding`` that does not write into the
    /// body; only `URLEncoding.httpBody` (or a body encoding such as ``JSONEncoding``) can be
    /// combined with URL parameters.
    case invalidCompositeBodyEncoding

    /// The error that made the encoding fail, if one was wrapped.
    public var underlyingError: Swift.Error? {
        switch self {
        case .missingURL, .invalidJSONObject, .invalidCompositeBodyEncoding:
            return nil
        case .jsonEncodingFailed(let error), .propertyListEncodingFailed(let error):
            return error
        }
    }

    /// A sentence describing what went wrong.
    public var errorDescription: String? {
        switch self {
        case .missingURL:
            return "URL request to encode was missing a URL."
        case .invalidJSONObject:
            return "JSON could not be encoded because the parameters are not a valid JSON object."
        case .invalidCompositeBodyEncoding:
            return "Only URLEncoding.httpBody can encode the body of requestCompositeParameters; the URL parameters are always query-encoded."
        case .jsonEncodingFailed(let error):
            return "JSON could not be encoded because of error:\n\(ErrorText.describe(error))"
        case .propertyListEncodingFailed(let error):
            return "PropertyList could not be encoded because of error:\n\(ErrorText.describe(error))"
        }
    }

    /// The same text as ``errorDescription``.
    public var description: String {
        errorDescription ?? "Parameter encoding failed."
    }
}

// The wrapped errors are immutable values: they are stored once when the case is created and are
// never mutated afterwards, so sharing a `ParameterEncodingError` across threads is safe.
extension ParameterEncodingError: @unchecked Sendable {}
