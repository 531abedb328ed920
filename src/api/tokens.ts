/**
 * `ctxsim/tokens`: token counting — the encodings and open-weight
 * tokenizers, the counter that counts each text once, and the calibration
 * of a stand-in tokenizer's `tokenFactor` from billed transcripts.
 *
 * @packageDocumentation
 * @module ctxsim/tokens
 */

export { messageText, openTokenCounter, TokenCounter } from '../tokens/counter.js';
export { encodingForModel, textCounter, TOKENIZERS, type EncodingName, type ResolvedEncoding, type TextCounter, type TokenFactor, type TokenizerName } from '../tokens/encoding.js';
export { OPEN_WEIGHTS, type OpenWeightName, type OpenWeightSource } from '../tokens/open-weights.js';
export { calibrateTokenFactor, calibrationReport, tokenFactorLine, type CalibrateOptions, type Calibration, type CalibrationCall, type CalibrationError, type LeftOut, type ModelCalibration, type SkippedTranscript } from '../study/calibrate.js';
