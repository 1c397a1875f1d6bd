#if RxMoya
import Foundation
import Moya
import RxSwift

extension PrimitiveSequence where Trait == SingleTrait, Element == Response {
    /// Fails with `MoyaError.statusCode` when the status code is outside `statusCodes`.
    ///
    /// - Parameter statusCodes: The accepted codes.
    /// - Returns: A `Single` of the accepted response.
    public func filter<R: RangeExpression>(statusCodes: R) -> Single<Response> where R.Bound == Int {
        map { try $0.filter(statusCodes: statusCodes) }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is `statusCode`.
    ///
    /// - Parameter statusCode: The accepted code.
    /// - Returns: A `Single` of the accepted response.
    public func filter(statusCode: Int) -> Single<Response> {
        map { try $0.filter(statusCode: statusCode) }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is in 200...299.
    ///
    /// ```swift
    /// let disposable = provider.rx.request(.userProfile("moya"))
    ///     .filterSuccessfulStatusCodes()
    ///     .map(User.self)
    ///     .subscribe(onSuccess: { print($0.login) }, onFailure: { print($0) })
    /// ```
    ///
    /// - Returns: A `Single` of the successful response.
    public func filterSuccessfulStatusCodes() -> Single<Response> {
        map { try $0.filterSuccessfulStatusCodes() }
    }

    /// Fails with `MoyaError.statusCode` unless the status code is in 200...399.
    ///
    /// - Returns: A `Single` of the successful or redirect response.
    public func filterSuccessfulStatusAndRedirectCodes() -> Single<Response> {
        map { try $0.filterSuccessfulStatusAndRedirectCodes() }
    }

    #if canImport(UIKit) || canImport(AppKit)
    /// Maps the body to an image, failing with `MoyaError.imageMapping`.
    ///
    /// Only available where UIKit or AppKit exist.
    ///
    /// - Returns: A `Single` of the image.
    public func mapImage() -> Single<Image> {
        map { try $0.mapImage() }
    }
    #endif

    /// Maps the body to a JSON object, as `Response.mapJSON(failsOnEmptyData:)` does, failing
    /// with `MoyaError.jsonMapping`.
    ///
    /// - Parameter failsOnEmptyData: Whether an empty body is an error (otherwise it maps to `NSNull`).
    /// - Returns: A `Single` of the JSON object.
    public func mapJSON(failsOnEmptyData: Bool = true) -> Single<Any> {
        map { try $0.mapJSON(failsOnEmptyData: failsOnEmptyData) }
    }

    /// Maps the body, or the string at a key path of its JSON, to a string, as
    /// `Response.mapString(atKeyPath:)` does, failing with `MoyaError.stringMapping`.
    ///
    /// - Parameter keyPath: A dotted key path into the top-level JSON dictionary, or `nil`.
    /// - Returns: A `Single` of the string.
    public func mapString(atKeyPath keyPath: String? = nil) -> Single<String> {
        map { try $0.mapString(atKeyPath: keyPath) }
    }

    /// Decodes the body, or the value at a key path of its JSON, as
    /// `Response.map(_:atKeyPath:using:failsOnEmptyData:)` does, failing with
    /// `MoyaError.objectMapping`.
    ///
    /// - Parameters:
    ///   - type:             The type to decode.
    ///   - keyPath:          A dotted key path into the top-level JSON dictionary, or `nil`.
    ///   - decoder:          The decoder to use.
    ///   - failsOnEmptyData: Whether an empty body (or a missing key path) is an error.
    /// - Returns: A `Single` of the decoded value.
    public func map<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String? = nil,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) -> Single<D> {
        map { try $0.map(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData) }
    }
}
#endif
