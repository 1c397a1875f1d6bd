#if ReactiveMoya
import Foundation
import Moya
import ReactiveSwift

extension SignalProducerProtocol where Value == Response, Error == MoyaError {
    /// Fails with `MoyaError.statusCode` when the status code is outside `statusCodes`.
    ///
    /// - Parameter statusCodes: The accepted codes.
    /// - Returns: A producer of the accepted responses.
    public func filter<R: RangeExpression>(statusCodes: R) -> SignalProducer<Response, MoyaError> where R.Bound == Int {
        attemptMoyaMap { try $0.filter(statusCodes: statusCodes) }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is `statusCode`.
    ///
    /// - Parameter statusCode: The accepted code.
    /// - Returns: A producer of the accepted responses.
    public func filter(statusCode: Int) -> SignalProducer<Response, MoyaError> {
        attemptMoyaMap { try $0.filter(statusCode: statusCode) }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is in 200...299.
    ///
    /// - Returns: A producer of the successful responses.
    public func filterSuccessfulStatusCodes() -> SignalProducer<Response, MoyaError> {
        attemptMoyaMap { try $0.filterSuccessfulStatusCodes() }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is in 200...399.
    ///
    /// - Returns: A producer of the successful and redirect responses.
    public func filterSuccessfulStatusAndRedirectCodes() -> SignalProducer<Response, MoyaError> {
        attemptMoyaMap { try $0.filterSuccessfulStatusAndRedirectCodes() }
    }

    #if canImport(UIKit) || canImport(AppKit)
    /// Maps the body to an image, failing with `MoyaError.imageMapping`.
    ///
    /// - Returns: A producer of images.
    public func mapImage() -> SignalProducer<Image, MoyaError> {
        attemptMoyaMap { try $0.mapImage() }
    }
    #endif

    /// Maps the body to a JSON object, as `Response.mapJSON(failsOnEmptyData:)` does.
    ///
    /// ```swift
    /// let disposable = provider.reactive.request(.userProfile("ashfurrow"), callbackQueue: .global())
    ///     .filterSuccessfulStatusCodes()
    ///     .mapJSON()
    ///     .startWithResult { result in print(result) }
    /// ```
    ///
    /// - Parameter failsOnEmptyData: Whether an empty body is an error (otherwise it maps to `NSNull`).
    /// - Returns: A producer of JSON objects.
    public func mapJSON(failsOnEmptyData: Bool = true) -> SignalProducer<Any, MoyaError> {
        attemptMoyaMap { try $0.mapJSON(failsOnEmptyData: failsOnEmptyData) }
    }

    /// Maps the body, or the string at a key path of its JSON, to a string, as
    /// `Response.mapString(atKeyPath:)` does.
    ///
    /// - Parameter keyPath: A dotted key path into the top-level JSON dictionary, or `nil`.
    /// - Returns: A producer of strings.
    public func mapString(atKeyPath keyPath: String? = nil) -> SignalProducer<String, MoyaError> {
        attemptMoyaMap { try $0.mapString(atKeyPath: keyPath) }
    }

    /// Decodes the body, or the value at a key path of its JSON, as
    /// `Response.map(_:atKeyPath:using:failsOnEmptyData:)` does.
    ///
    /// ```swift
    /// let disposable = provider.reactive.request(.userProfile("ashfurrow"), callbackQueue: .global())
    ///     .map(User.self)
    ///     .startWithResult { result in
    ///         switch result {
    ///         case .success(let user): print(user.login)
    ///         case .failure(let error): print(error)
    ///         }
    ///     }
    /// ```
    ///
    /// - Parameters:
    ///   - type:             The type to decode.
    ///   - keyPath:          A dotted key path into the top-level JSON dictionary, or `nil`.
    ///   - decoder:          The decoder to use.
    ///   - failsOnEmptyData: Whether an empty body (or a missing key path) is an error.
    /// - Returns: A producer of decoded values.
    public func map<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String? = nil,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) -> SignalProducer<D, MoyaError> {
        attemptMoyaMap { try $0.map(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData) }
    }
}

extension SignalProducerProtocol where Error == MoyaError {
    /// Maps each value with a throwing `transform`; a `MoyaError` it throws fails the producer
    /// as is, any other error as `MoyaError.underlying(error, nil)`.
    func attemptMoyaMap<T>(_ transform: @escaping (Value) throws -> T) -> SignalProducer<T, MoyaError> {
        producer.attemptMap { value -> Result<T, MoyaError> in
            do {
                return .success(try transform(value))
            } catch let error as MoyaError {
                return .failure(error)
            } catch {
                return .failure(.underlying(error, nil))
            }
        }
    }
}
#endif
