import Foundation
import Logging
import Moya

/// Logs each upstream call through swift-log: the request when it is sent, the outcome when it
/// ends, and each retry in between.
public struct UpstreamLogPlugin: PluginType, Sendable {
    private let logger: Logger

    /// - Parameter logger: Where the lines go.
    public init(logger: Logger) {
        self.logger = logger
    }

    public func willSend(_ request: RequestType, target: TargetType) {
        logger.debug("upstream call", metadata: ["method": "\(request.request?.httpMethod ?? "?")", "path": "\(target.path)"])
    }

    public func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
        logger.notice("upstream call sent again", metadata: ["path": "\(target.path)", "attempt": "\(attempt)"])
    }

    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        switch result {
        case .success(let response):
            logger.debug(
                "upstream answered", metadata: ["path": "\(target.path)", "status": "\(response.statusCode)", "cache": "\(response.cacheStatus)"])
        case .failure(let error):
            logger.warning("upstream call failed", metadata: ["path": "\(target.path)", "error": "\(error.localizedDescription)"])
        }
    }
}
