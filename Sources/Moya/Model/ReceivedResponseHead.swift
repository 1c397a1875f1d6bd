import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head as the transport received it, whose Foundation `HTTPURLResponse` is made only
/// when someone reads it (building one costs more than most requests need).
///
/// ``Response`` holds one for a response from the network; the transport's implementation keeps
/// its own header type, which this room cannot name.
protocol ReceivedResponseHead: AnyObject, Sendable {
    /// The status code.
    var statusCode: Int { get }
    /// The `HTTPURLResponse`, made on the first read; `nil` when it cannot be made.
    var value: HTTPURLResponse? { get }
    /// The header fields in the order they were received, a repeated field once per occurrence;
    /// `nil` when the head was not received as fields (a stored or made-up response).
    var receivedHeaderFields: [HTTPHeader]? { get }
}
