import FoundationEssentials
import Glibc

/// Words for a failed file operation.
public enum SystemError {
    /// The system's own words (strerror) for what FileManager or Data(contentsOf:) threw when a
    /// system call failed under it (`No such file or directory`); the error itself otherwise.
    /// NSError's localizedDescription, which said it in a sentence, is Foundation proper.
    public static func reason(_ error: any Error) -> String {
        if let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }
}
