import Foundation

/// An error from Moya: a failed request, a rejected status code, or a body that could not be
/// mapped.
public enum MoyaError: Swift.Error {
    /// The body could not be mapped to an image (Apple platforms only).
    case imageMapping(Response)

    /// The body could not be mapped to JSON.
    case jsonMapping(Response)

    /// The body could not be mapped to a string.
    case stringMapping(Response)

    /// The body could not be decoded as a `Decodable` type; the error is the decoder's.
    case objectMapping(Swift.Error, Response)

    /// An `Encodable` request body could not be encoded.
    case encodableMapping(Swift.Error)

    /// The status code was outside the accepted range.
    case statusCode(Response)

    /// The request failed with another error, possibly after a response arrived.
    case underlying(Swift.Error, Response? = nil)

    /// The endpoint could not be turned into a `URLRequest`; the string is the URL.
    case requestMapping(String)

    /// The request parameters could not be encoded.
    case parameterEncoding(Swift.Error)
}

// The payloads are immutable once the error exists: `Response` is an immutable `Sendable`
// class, strings are values, and Moya never mutates the errors it wraps. The wrapped
// `Swift.Error`s are not statically `Sendable`, hence `@unchecked`.
extension MoyaError: @unchecked Sendable {}

extension MoyaError {
    /// The response associated with the error, if any.
    public var response: Response? {
        switch self {
        case .imageMapping(let response),
            .jsonMapping(let response),
            .stringMapping(let response),
            .objectMapping(_, let response),
            .statusCode(let response):
            return response
        case .underlying(_, let response):
            return response
        case .encodableMapping, .requestMapping, .parameterEncoding:
            return nil
        }
    }

    /// The error wrapped by this error, if any.
    public var underlyingError: Swift.Error? {
        switch self {
        case .objectMapping(let error, _),
            .encodableMapping(let error),
            .underlying(let error, _),
            .parameterEncoding(let error):
            return error
        case .imageMapping, .jsonMapping, .stringMapping, .statusCode, .requestMapping:
            return nil
        }
    }

    /// Whether this is a ``statusCode(_:)`` error: the response was rejected by validation
    /// or a status-code filter.
    public var isStatusCodeError: Bool {
        if case .statusCode = self {
            return true
        }
        return false
    }

    /// Whether the request was cancelled: the error is ``underlying(_:_:)`` wrapping an
    /// error in `NSURLErrorDomain` with code `NSURLErrorCancelled`.
    public var isCancelled: Bool {
        guard case .underlying(let error, _) = self else {
            return false
        }
        let nsError = error as NSError
        return nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled
    }
}
