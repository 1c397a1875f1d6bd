#if MoyaOpenAPI
import Moya
import OpenAPIRuntime

extension RequestBodyStream {
    /// A request body that streams a generated client's `HTTPBody`: its length, when known, is
    /// the request's `Content-Length`, and it may be sent again (by a redirect or a retry) only
    /// when its iteration behavior is `.multiple`.
    ///
    /// - Parameter body: The body to send.
    public init(_ body: HTTPBody) {
        let length: Int64? =
            switch body.length {
            case .known(let count): count
            case .unknown: nil
            }
        self.init(body, length: length, iteration: body.iterationBehavior == .multiple ? .multiple : .single)
    }
}
#endif
