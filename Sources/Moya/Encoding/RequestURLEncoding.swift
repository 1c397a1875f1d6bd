import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``ParameterEncoding`` that writes its parameters into the request's URL and nothing else:
/// given the endpoint's URL, it returns the request's whole URL.
///
/// Conform an encoding to it when all it does is decide the URL: a query in a format of its
/// own, values filled into the path, a URL that a code generator built. For a
/// ``Task/requestParameters(parameters:encoding:)`` task, ``Endpoint/urlRequest()`` then asks
/// it for the URL first and makes the request with that URL at once, instead of making a
/// request and handing it to ``ParameterEncoding/encode(_:with:)`` to change. The result is the
/// same; on Linux it is cheaper, since each change to a `URLRequest` after the first copies the
/// whole underlying request object (about 2 µs a request).
///
/// An encoding that also sets a body or header fields must not conform: for that task the
/// request is made with the URL and the endpoint's method and header fields, and
/// ``ParameterEncoding/encode(_:with:)`` is not called.
/// It is still called where the encoding is used otherwise (a
/// ``Task/downloadParameters(parameters:encoding:destination:)`` task, a caller of its own);
/// the default implementation sets the URL that ``requestURL(for:with:)`` returns.
///
/// ```swift
/// /// Writes the parameters as path segments: `/search` becomes `/search/page/2`.
/// struct PathSegmentEncoding: RequestURLEncoding {
///     func requestURL(for endpointURL: URL, with parameters: Parameters?) throws -> URL {
///         var url = endpointURL
///         for (name, value) in (parameters ?? [:]).sorted(by: { $0.key < $1.key }) {
///             url.appendPathComponent(name)
///             url.appendPathComponent("\(value)")
///         }
///         return url
///     }
/// }
/// ```
public protocol RequestURLEncoding: ParameterEncoding {
    /// The request's whole URL, with `parameters` encoded into it, when the endpoint's URL is
    /// `endpointURL`.
    ///
    /// - Parameters:
    ///   - endpointURL: The endpoint's URL: the target's `baseURL` and `path`, or what an
    ///     endpoint closure made of them.
    ///   - parameters:  The parameters to encode; `nil` means "leave the URL as it is".
    /// - Returns: The URL to send the request to.
    /// - Throws: An error when the parameters cannot be encoded; the provider reports it as
    ///   ``MoyaError/parameterEncoding(_:)``.
    func requestURL(for endpointURL: URL, with parameters: Parameters?) throws -> URL
}

extension RequestURLEncoding {
    /// Returns a copy of `urlRequest` whose URL is ``requestURL(for:with:)`` of its URL; a
    /// request without a URL is returned as it is.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode the parameters into.
    ///   - parameters: The parameters to encode.
    /// - Returns: The encoded request.
    /// - Throws: What ``requestURL(for:with:)`` throws, or what `urlRequest` throws when asked
    ///   for its request.
    public func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var request = try urlRequest.asURLRequest()
        guard let url = request.url else { return request }
        request.url = try requestURL(for: url, with: parameters)
        return request
    }
}
