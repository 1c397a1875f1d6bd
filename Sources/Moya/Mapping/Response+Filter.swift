import Foundation

extension Response {
    /// Returns this response if its status code falls within `statusCodes`.
    ///
    /// - Parameter statusCodes: The acceptable status codes, as a closed or half-open range.
    /// - Returns: `self`.
    /// - Throws: `MoyaError.statusCode(self)` when the status code is outside `statusCodes`.
    public func filter<R: RangeExpression>(statusCodes: R) throws -> Response where R.Bound == Int {
        guard statusCodes.contains(self.statusCode) else {
            throw MoyaError.statusCode(self)
        }
        return self
    }

    /// Returns this response if its status code equals `statusCode`.
    ///
    /// - Parameter statusCode: The only acceptable status code.
    /// - Returns: `self`.
    /// - Throws: `MoyaError.statusCode(self)` when the status code differs.
    public func filter(statusCode: Int) throws -> Response {
        try self.filter(statusCodes: statusCode...statusCode)
    }

    /// Returns this response if its status code is in `200...299`.
    ///
    /// - Returns: `self`.
    /// - Throws: `MoyaError.statusCode(self)` otherwise.
    public func filterSuccessfulStatusCodes() throws -> Response {
        try self.filter(statusCodes: 200...299)
    }

    /// Returns this response if its status code is in `200...399` (success or redirect).
    ///
    /// - Returns: `self`.
    /// - Throws: `MoyaError.statusCode(self)` otherwise.
    public func filterSuccessfulStatusAndRedirectCodes() throws -> Response {
        try self.filter(statusCodes: 200...399)
    }
}
