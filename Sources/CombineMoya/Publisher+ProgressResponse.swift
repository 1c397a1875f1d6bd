import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension Publisher where Output == ProgressResponse, Failure == MoyaError {
    /// Publishes only the response of the completed event.
    ///
    /// - Returns: A publisher of the response.
    public func filterCompleted() -> AnyPublisher<Response, MoyaError> {
        compactMap(\.response)
            .eraseToAnyPublisher()
    }

    /// Publishes the progress fraction of every event before the completed one.
    ///
    /// - Returns: A publisher of fractions from 0 to 1.
    public func filterProgress() -> AnyPublisher<Double, MoyaError> {
        filter { !$0.completed }
            .map(\.progress)
            .eraseToAnyPublisher()
    }
}
