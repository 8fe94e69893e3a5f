'use strict';
// The query parameters of a request: read once (names lower-cased, values
// decoded, the first of a repeated name), and the integers among them
// checked as Azure checks them: not an integer is
// InvalidQueryParameterValue, out of its range OutOfRangeQueryParameterValue,
// each naming the parameter.
const { AzureError, badParameter } = require('./errors');

// The query string (without "?") as a Map name -> value.
function readQuery(query) {
  const parameters = new Map();
  for (const part of query.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    let name;
    let value;
    try {
      name = decodeURIComponent(equals < 0 ? part : part.slice(0, equals)).toLowerCase();
      value = equals < 0 ? '' : decodeURIComponent(part.slice(equals + 1));
    } catch {
      throw new AzureError('InvalidUri', { message: 'The query string of the request is not correctly percent-encoded.' });
    }
    if (!parameters.has(name)) parameters.set(name, value);
  }
  return parameters;
}

// The integer parameter name of query, min to max (or also one of
// allowed), fallback when it is not given.
function integerParameter(query, name, { min, max, fallback, allowed = [] }) {
  if (!query.has(name)) return fallback;
  const text = query.get(name);
  if (!/^[+-]?[0-9]{1,12}$/.test(text)) throw badParameter('InvalidQueryParameterValue', name, text);
  const value = Number(text);
  if (allowed.includes(value)) return value;
  if (value < min || value > max) {
    throw badParameter('OutOfRangeQueryParameterValue', name, text, { MinimumAllowed: String(min), MaximumAllowed: String(max) });
  }
  return value;
}

function requiredParameter(query, name) {
  if (!query.has(name) || query.get(name) === '') {
    throw new AzureError('MissingRequiredQueryParameter', { details: { QueryParameterName: name } });
  }
  return query.get(name);
}

module.exports = { readQuery, integerParameter, requiredParameter };
