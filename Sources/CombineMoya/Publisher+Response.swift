import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension Publisher where Output == Response, Failure == MoyaError {
    /// Fails with `MoyaError.statusCode` when the status code is outside `statusCodes`.
    ///
    /// - Parameter statusCodes: The accepted codes.
    /// - Returns: A publisher of the accepted responses.
    public func filter<R: RangeExpression>(statusCodes: R) -> AnyPublisher<Response, MoyaError> where R.Bound == Int {
        tryMapMoya { try $0.filter(statusCodes: statusCodes) }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is `statusCode`.
    ///
    /// - Parameter statusCode: The accepted code.
    /// - Returns: A publisher of the accepted responses.
    public func filter(statusCode: Int) -> AnyPublisher<Response, MoyaError> {
        tryMapMoya { try $0.filter(statusCode: statusCode) }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is in 200...299.
    ///
    /// - Returns: A publisher of the successful responses.
    public func filterSuccessfulStatusCodes() -> AnyPublisher<Response, MoyaError> {
        tryMapMoya { try $0.filterSuccessfulStatusCodes() }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is in 200...399.
    ///
    /// - Returns: A publisher of the successful and redirect responses.
    public func filterSuccessfulStatusAndRedirectCodes() -> AnyPublisher<Response, MoyaError> {
        tryMapMoya { try $0.filterSuccessfulStatusAndRedirectCodes() }
    }

    #if canImport(UIKit) || canImport(AppKit)
    /// Maps the body to an image, failing with `MoyaError.imageMapping`.
    ///
    /// - Returns: A publisher of images.
    public func mapImage() -> AnyPublisher<Image, MoyaError> {
        tryMapMoya { try $0.mapImage() }
    }
    #endif

    /// Maps the body to a JSON object, as `Response.mapJSON(failsOnEmptyData:)` does.
    ///
    /// - Parameter failsOnEmptyData: Whether an empty body is an error (otherwise it maps to `NSNull`).
    /// - Returns: A publisher of JSON objects.
    public func mapJSON(failsOnEmptyData: Bool = true) -> AnyPublisher<Any, MoyaError> {
        tryMapMoya { try $0.mapJSON(failsOnEmptyData: failsOnEmptyData) }
    }

    /// Maps the body, or the string at a key path of its JSON, to a string, as
    /// `Response.mapString(atKeyPath:)` does.
    ///
    /// - Parameter keyPath: A dotted key path into the top-level JSON dictionary, or `nil`.
    /// - Returns: A publisher of strings.
    public func mapString(atKeyPath keyPath: String? = nil) -> AnyPublisher<String, MoyaError> {
        tryMapMoya { try $0.mapString(atKeyPath: keyPath) }
    }

    /// Decodes the body, or the value at a key path of its JSON, as
    /// `Response.map(_:atKeyPath:using:failsOnEmptyData:)` does.
    ///
    /// - Parameters:
    ///   - type:             The type to decode.
    ///   - keyPath:          A dotted key path into the top-level JSON dictionary, or `nil`.
    ///   - decoder:          The decoder to use.
    ///   - failsOnEmptyData: Whether an empty body (or a missing key path) is an error.
    /// - Returns: A publisher of decoded values.
    public func map<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String? = nil,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) -> AnyPublisher<D, MoyaError> {
        tryMapMoya { try $0.map(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData) }
    }
}

extension Publisher where Failure == MoyaError {
    /// Maps each value with a throwing `transform`; a `MoyaError` it throws fails the publisher
    /// as is, any other error as `MoyaError.underlying(error, nil)`.
    func tryMapMoya<T>(_ transform: @escaping (Output) throws -> T) -> AnyPublisher<T, MoyaError> {
        tryMap(transform)
            .mapError { error in error as? MoyaError ?? MoyaError.underlying(error, nil) }
            .eraseToAnyPublisher()
    }
}
