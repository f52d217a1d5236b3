/**
 * robotsd's answers and requests as Java records, written by hand from {@code openapi/openapi.json}
 * (no generator runs offline here) and held to it by the client's tests: every property of each
 * schema is a record component (its {@code @JsonProperty} names the snake-case property where
 * the Java name differs) and every component a property.
 * Optional and nullable properties are boxed types or {@code null}; dates are RFC 3339 strings as
 * robotsd writes them. Unknown properties are ignored, so that a newer robotsd can add some.
 */
package io.github.robotsd.client.model;
