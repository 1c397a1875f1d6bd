import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Endpoint {
    /// Builds the `URLRequest` for this endpoint: URL, method, headers, and the body and query
    /// parameters of its task.
    ///
    /// Upload and download tasks get no body here; the provider streams it when the request is
    /// sent.
    ///
    /// - Returns: The request.
    /// - Throws: ``MoyaError/requestMapping(_:)`` when ``url`` is not a valid URL,
    ///   ``MoyaError/parameterEncoding(_:)`` when parameters cannot be encoded, and
    ///   ``MoyaError/encodableMapping(_:)`` when an `Encodable` body cannot be encoded.
    public func urlRequest() throws -> URLRequest {
        // Parameters that go into the URL are added to the string before it is parsed (once) and
        // before the request exists: on Linux every change to a `URLRequest` after the first
        // copies the whole underlying object.
        if case .requestParameters(let parameters, let parameterEncoding) = task,
            let urlEncoding = parameterEncoding as? URLEncoding,
            urlEncoding.destination.encodesParametersInURL(for: method),
            !parameters.isEmpty
        {
            if let requestURL = Endpoint.strictURL(from: urlEncoding.urlString(url, appendingQueryFor: parameters)) {
                return makeRequest(url: requestURL)
            }
            // The query is always valid, so the endpoint's own URL is the culprit.
            throw MoyaError.requestMapping(url)
        }

        guard let requestURL = ParsedURLCache.shared.url(for: url, parse: Endpoint.strictURL(from:)) else {
            throw MoyaError.requestMapping(url)
        }
        // An encoding that decides the whole URL (a generated OpenAPI client's) gives it before
        // the request is made, rather than changing the request afterwards.
        if case .requestParameters(let parameters, let parameterEncoding) = task, let urlEncoding = parameterEncoding as? any RequestURLEncoding {
            do {
                return makeRequest(url: try urlEncoding.requestURL(for: requestURL, with: parameters))
            } catch {
                throw MoyaError.parameterEncoding(error)
            }
        }
        var request = makeRequest(url: requestURL)
        switch task {
        case .requestPlain, .uploadFile, .uploadMultipart, .uploadMultipartFormData, .downloadDestination:
            return request
        case .requestData(let data):
            request.httpBody = data
            return request
        case .requestJSONEncodable(let encodable):
            return try request.encoded(encodable: encodable)
        case .requestCustomJSONEncodable(let encodable, encoder: let encoder):
            return try request.encoded(encodable: encodable, encoder: encoder)
        case .requestParameters(let parameters, let parameterEncoding):
            return try request.encoded(parameters: parameters, parameterEncoding: parameterEncoding)
        case .uploadCompositeMultipart(_, let urlParameters),
            .uploadCompositeMultipartFormData(_, let urlParameters):
            return try request.encoded(parameters: urlParameters, parameterEncoding: URLEncoding(destination: .queryString))
        case .downloadParameters(let parameters, let parameterEncoding, _):
            return try request.encoded(parameters: parameters, parameterEncoding: parameterEncoding)
        case .requestCompositeData(bodyData: let bodyData, urlParameters: let urlParameters):
            request.httpBody = bodyData
            return try request.encoded(parameters: urlParameters, parameterEncoding: URLEncoding(destination: .queryString))
        case .requestCompositeParameters(bodyParameters: let bodyParameters, bodyEncoding: let bodyParameterEncoding, urlParameters: let urlParameters):
            if let bodyParameterEncoding = bodyParameterEncoding as? URLEncoding, bodyParameterEncoding.destination != .httpBody {
                throw MoyaError.parameterEncoding(ParameterEncodingError.invalidCompositeBodyEncoding)
            }
            let bodyfulRequest = try request.encoded(parameters: bodyParameters, parameterEncoding: bodyParameterEncoding)
            return try bodyfulRequest.encoded(parameters: urlParameters, parameterEncoding: URLEncoding(destination: .queryString))
        }
    }

    /// A request for `url` with this endpoint's method and headers. `GET` and no headers are
    /// what a new `URLRequest` has already, so they are not set again.
    private func makeRequest(url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        if method != .get {
            request.httpMethod = method.rawValue
        }
        if let httpHeaderFields, !httpHeaderFields.isEmpty {
            request.allHTTPHeaderFields = httpHeaderFields
        }
        return request
    }

    /// Parses `string` strictly: unlike `URL(string:)` on Swift 6 Foundation, characters that are
    /// not allowed in a URL (such as spaces) make it fail instead of being percent-encoded.
    static func strictURL(from string: String) -> URL? {
        #if canImport(FoundationNetworking)
        return URL(string: string, encodingInvalidCharacters: false)
        #else
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            return URL(string: string, encodingInvalidCharacters: false)
        } else {
            return URL(string: string)
        }
        #endif
    }
}

extension URLRequest {
    /// Sets the body to `encodable` encoded as JSON, and `Content-Type: application/json` when no
    /// content type is set yet.
    func encoded(encodable: any Encodable, encoder: JSONEncoder = JSONEncoder()) throws -> URLRequest {
        var request = self
        do {
            request.httpBody = try encoder.encode(AnyEncodable(encodable))
        } catch {
            throw MoyaError.encodableMapping(error)
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Encodes `parameters` with `parameterEncoding`, wrapping any failure in
    /// ``MoyaError/parameterEncoding(_:)``.
    func encoded(parameters: [String: Any], parameterEncoding: any ParameterEncoding) throws -> URLRequest {
        do {
            return try parameterEncoding.encode(self, with: parameters)
        } catch {
            throw MoyaError.parameterEncoding(error)
        }
    }
}
