import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What makes two endpoints the same request: method, final URL, headers, body and the upload
/// source. Foundation's `URLRequest ==` on Linux ignores headers and body, so Moya compares
/// them itself.
struct EndpointIdentity: Hashable {
    enum UploadSource: Hashable {
        case none
        case file(URL)
        case multipart(MultipartForm)
        case parts([MultipartFormData])
    }

    let method: String
    let url: String
    let headers: [String: String]?
    let body: Data?
    let upload: UploadSource
    let requestBuilt: Bool

    init(endpoint: Endpoint) {
        switch endpoint.task {
        case .uploadFile(let url): upload = .file(url)
        case .uploadMultipartFormData(let form), .uploadCompositeMultipartFormData(let form, _): upload = .multipart(form)
        case .uploadMultipart(let parts), .uploadCompositeMultipart(let parts, _): upload = .parts(parts)
        default: upload = .none
        }

        if let request = try? endpoint.urlRequest() {
            method = request.httpMethod ?? endpoint.method.rawValue
            url = request.url?.absoluteString ?? endpoint.url
            headers = request.allHTTPHeaderFields
            body = EndpointIdentity.comparableBody(request.httpBody, task: endpoint.task, contentType: request.value(forHTTPHeaderField: "Content-Type"))
            requestBuilt = true
        } else {
            method = endpoint.method.rawValue
            url = endpoint.url
            headers = endpoint.httpHeaderFields
            body = nil
            requestBuilt = false
        }
    }
}

extension EndpointIdentity {
    /// The body as it is compared. A JSON body that Moya encoded is compared by its meaning,
    /// written again with sorted keys: Linux's `JSONEncoder` and `JSONSerialization` write an
    /// object's keys in an order that changes from one encoding to the next, so equal values
    /// would otherwise give unequal bytes.
    static func comparableBody(_ body: Data?, task: Task, contentType: String?) -> Data? {
        guard let body, !body.isEmpty else { return body }
        switch task {
        case .requestJSONEncodable, .requestCustomJSONEncodable, .requestParameters, .requestCompositeParameters:
            break
        default:
            return body
        }
        guard let contentType, contentType.range(of: "json", options: .caseInsensitive) != nil,
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let canonical = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return canonical
    }
}

extension Endpoint: Equatable, Hashable {
    /// Hashes what identifies the request: method, URL, headers, body and upload source.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(EndpointIdentity(endpoint: self))
    }

    /// Two endpoints are equal when they build the same request: same method, URL, headers,
    /// body and upload source. Sample responses and download destinations are not compared.
    public static func == (lhs: Endpoint, rhs: Endpoint) -> Bool {
        lhs === rhs || EndpointIdentity(endpoint: lhs) == EndpointIdentity(endpoint: rhs)
    }
}
