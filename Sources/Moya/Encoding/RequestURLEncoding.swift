import Foundation

/// A parameter encoding whose only work is to set the request's whole URL, given the endpoint's.
///
/// ``Endpoint/urlRequest()`` asks it for the URL and makes the request with that URL at once,
/// instead of letting it change a request already made: on Linux each change to a `URLRequest`
/// after the first copies the whole underlying object. Its `encode(_:with:)` must set the same
/// URL, for callers that use it as a plain ``ParameterEncoding``.
///
/// `package`, not public: `MoyaOpenAPI`'s encoding of a generated client's path and query is
/// the one conformance (ARCHITECTURE lists this surface).
package protocol RequestURLEncoding: ParameterEncoding {
    /// The request's URL when the endpoint's is `endpointURL`.
    ///
    /// - Throws: An error that the provider reports as ``MoyaError/parameterEncoding(_:)``.
    func requestURL(for endpointURL: URL) throws -> URL
}
