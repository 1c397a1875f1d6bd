import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// The request's HTTP method as a ``Method``, as Alamofire's `URLRequest.method`; setting
    /// `nil` clears `httpMethod` (which then reads as `GET`).
    public var method: Method? {
        get { httpMethod.map { Method(rawValue: $0) } }
        set { httpMethod = newValue?.rawValue }
    }
}
