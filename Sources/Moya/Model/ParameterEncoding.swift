import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A dictionary of parameters to encode into a request, as in Alamofire.
public typealias Parameters = [String: Any]

/// A type that can produce a `URLRequest`, as in Alamofire.
///
/// `URLRequest` itself conforms, so encodings can be called with a plain request.
public protocol URLRequestConvertible {
    /// Returns the request this value stands for.
    ///
    /// - Throws: Any error that prevents the request from being built.
    func asURLRequest() throws -> URLRequest
}

extension URLRequestConvertible {
    /// The request this value stands for, or `nil` when ``asURLRequest()`` throws.
    public var urlRequest: URLRequest? { try? asURLRequest() }
}

extension URLRequest: URLRequestConvertible {
    /// Returns the request itself.
    public func asURLRequest() throws -> URLRequest { self }
}

/// A type that writes parameters into a `URLRequest` (its URL query, its body, or both).
///
/// Moya ships ``URLEncoding``, ``JSONEncoding`` and ``PropertyListEncoding``. Write your own by
/// conforming a type to this protocol; Moya calls it from `Endpoint.urlRequest()` and wraps any
/// error it throws in ``MoyaError/parameterEncoding(_:)``.
public protocol ParameterEncoding {
    /// Returns a copy of `urlRequest` with `parameters` encoded into it.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode the parameters into.
    ///   - parameters: The parameters to encode; `nil` means "leave the request as it is".
    /// - Returns: The encoded request.
    /// - Throws: An error when the parameters cannot be encoded.
    func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest
}
