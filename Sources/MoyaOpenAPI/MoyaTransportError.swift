#if MoyaOpenAPI
import Foundation

/// An error of ``MoyaTransport`` itself, before any request is sent. A failure of the exchange
/// is the provider's `MoyaError`.
public enum MoyaTransportError: Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// The generated client's request path and the server URL do not make a URL.
    case invalidRequestURL(path: String?, baseURL: URL)

    /// What went wrong and what to check.
    public var errorDescription: String? {
        switch self {
        case .invalidRequestURL(let path, let baseURL):
            let path = path.map { "\"\($0)\"" } ?? "(none)"
            return "The request path \(path) and the server URL \(baseURL.absoluteString) do not make a URL: check the server URL given to the client."
        }
    }

    /// The same as ``errorDescription``.
    public var description: String { errorDescription ?? "MoyaTransportError" }
}
#endif
