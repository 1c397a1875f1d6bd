#if MoyaOpenAPI
import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sets the path and query of a request's URL to the ones a generated client encoded, whatever
/// the endpoint's URL had; its scheme, host and port stay.
struct OpenAPIURLEncoding: ParameterEncoding, Sendable {
    /// The URL's path, percent-encoded.
    let percentEncodedPath: String
    /// The URL's query, percent-encoded; `nil` for none.
    let percentEncodedQuery: String?

    func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var request = try urlRequest.asURLRequest()
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return request
        }
        components.percentEncodedPath = percentEncodedPath
        components.percentEncodedQuery = percentEncodedQuery
        guard let encoded = components.url else {
            throw MoyaTransportError.invalidRequestURL(path: percentEncodedPath, baseURL: url)
        }
        request.url = encoded
        return request
    }
}
#endif
