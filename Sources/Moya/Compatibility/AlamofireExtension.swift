import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `af` namespace of Alamofire, kept for the members Moya 15 code reaches through it:
/// `URLSessionConfiguration.af.default` and `URLSessionConfiguration.af.ephemeral`.
public struct AlamofireExtension<ExtendedType> {
    /// The extended value.
    public let type: ExtendedType

    /// Wraps a value.
    public init(_ type: ExtendedType) {
        self.type = type
    }
}

extension URLSessionConfiguration {
    /// Alamofire's namespace on `URLSessionConfiguration`.
    public static var af: AlamofireExtension<URLSessionConfiguration>.Type {
        AlamofireExtension<URLSessionConfiguration>.self
    }
}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// `URLSessionConfiguration.default` with ``HTTPHeaders/default`` as its headers.
    public static var `default`: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        return configuration
    }

    /// `URLSessionConfiguration.ephemeral` with ``HTTPHeaders/default`` as its headers.
    public static var ephemeral: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.headers = .default
        return configuration
    }
}
