import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// Sends an upload whose body `makeBody` describes. A body that cannot be built (a missing
    /// or unreadable file) fails the request before anything is sent; plugins see `prepare`,
    /// `willSend` and `didReceive` as for any failed request.
    func sendUpload(_ request: URLRequest, _ send: SendContext, makeBody: (inout URLRequest) throws -> StreamedBody) {
        var request = request
        let body: StreamedBody
        do {
            body = try makeBody(&request)
        } catch {
            let (preparedRequest, _) = prepareAndAnnounce(request, pluginTarget: send.flight.pluginTarget)
            // Metrics: the request fails just before it would be sent.
            send.flight.measure(session.requestMetrics?.start(preparedRequest, stubbed: false, target: send.target))
            fail(send, error: MoyaError.underlying(error, nil))
            return
        }
        sendRequest(request, send, body: body)
    }

    /// Sends a multipart form: checks that it has parts and that the method can carry it, sets
    /// `Content-Type` with the boundary, and streams the parts.
    func sendMultipart(_ request: URLRequest, _ send: SendContext, isEmpty: Bool, makeEncoder: () -> RequestMultipartFormData) {
        sendUpload(request, send) { request in
            let method = Method(rawValue: request.httpMethod ?? "GET")
            guard method.supportsMultipart else { throw MultipartEncodingError.methodNotAllowed(method) }
            guard !isEmpty else { throw MultipartEncodingError.emptyForm }
            let encoder = makeEncoder()
            let body = try encoder.streamedBody()
            // Replace any Content-Type, whatever its case, with the form's.
            for name in (request.allHTTPHeaderFields ?? [:]).keys where name.lowercased() == "content-type" {
                request.setValue(nil, forHTTPHeaderField: name)
            }
            request.setValue(encoder.contentType, forHTTPHeaderField: "Content-Type")
            return body
        }
    }
}
